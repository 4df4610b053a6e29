#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The documents cite only files that are in the repository: every relative
Markdown link in README.md, deploy/, bench/ and docs/ (its part before any
'#') names a file or folder of the source tree, relative to the document.
Prints each broken link as FILE:LINE: and exits 1.

Usage: doc_links.py [SOURCE_DIR]"""
import pathlib
import re
import sys

root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).resolve().parents[2])
documents = [root / "README.md"] + sorted(p for d in ("docs", "deploy", "bench") for p in (root / d).rglob("*.md"))
link = re.compile(r"\]\(([^)\s]+)\)")
bad = 0
checked = 0
for doc in documents:
    for number, line in enumerate(doc.read_text().splitlines(), 1):
        for target in link.findall(line):
            if re.match(r"[a-z]+:", target) or target.startswith("#"):
                continue  # a URL, or a heading of the same page
            checked += 1
            path = (doc.parent / target.split("#", 1)[0]).resolve()
            if not path.exists() or root.resolve() not in path.parents and path != root.resolve():
                print(f"{doc.relative_to(root)}:{number}: links to {target}, which is not in the repository")
                bad = 1
if checked == 0:
    print("no links found: is the source folder right?")
    sys.exit(1)
print(f"document links: {checked} checked" + (", some broken" if bad else ", all there"))
sys.exit(bad)
