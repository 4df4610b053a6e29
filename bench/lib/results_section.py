#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Replace (or append) the section "## NAME" of a Markdown file with stdin.

Usage: results_section.py NAME FILE < SECTION

The section runs from its heading to the next level-2 heading or the end of
the file; other sections stay as they are. Every benchmark writes its results
into bench/RESULTS.md this way.
"""
import os
import re
import sys


def main() -> int:
    if len(sys.argv) != 3:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    name, path = sys.argv[1], sys.argv[2]
    section = sys.stdin.read().rstrip("\n") + "\n"
    if not section.startswith(f"## {name}\n"):
        print(f"results_section.py: the section must start with '## {name}'", file=sys.stderr)
        return 2
    text = open(path).read() if os.path.exists(path) else ""
    pattern = re.compile(rf"^## {re.escape(name)}[ \t]*\n.*?(?=^## |\Z)", re.M | re.S)
    if pattern.search(text):
        text = pattern.sub(lambda _: section + "\n", text, count=1).rstrip("\n") + "\n"
    else:
        text = (text.rstrip("\n") + "\n\n" if text else "") + section
    with open(path, "w") as f:
        f.write(text)
    print(f"wrote section '## {name}' to {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
