#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Product functions stay under 80 lines, or docs/design.md says why not.

Reads every C++ source of the product (common, fscore, crashlab, server,
plugins, tools), finds each function body (a brace block after a ")" and its
qualifiers, or a constructor's initializer list) at namespace or class scope,
and counts its lines from the first line of its declaration to its closing
brace. A lambda or a local class is counted as part of the function it is in.
Then reads the table under "Functions over 80 lines" in docs/design.md: its
rows name a function as `Name` (file) with its line count.

Fails (exit 1), naming each:
  - a function over 80 lines that the table does not name;
  - a row whose function is not found in its file, is 80 lines or fewer, or
    whose count is not the measured one (the table is kept true).

Usage: function_length.py [SOURCE_DIR]
       function_length.py --list [SOURCE_DIR]   every function over 80 lines"""
import pathlib
import re
import sys

LIMIT = 80
PRODUCT = ("common", "fscore", "crashlab", "server", "plugins", "tools")
SCOPE = re.compile(r"^(?:template\s*<.*>\s*)?(namespace|struct|class|union|enum|extern\s+\"C\")\b")


def strip(text):
    """The text with comments, string and character literals and preprocessor
    lines blanked, newlines kept, so that offsets keep their line numbers."""
    out = []
    i, n = 0, len(text)
    at_line_start = True
    while i < n:
        c = text[i]
        if at_line_start and c == "#":
            j = i
            while j < n and text[j] != "\n":  # a directive, with its continuations
                j += 2 if text[j] == "\\" else 1
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
            continue
        if c == "\n":
            at_line_start = True
            out.append(c)
            i += 1
            continue
        if not c.isspace():
            at_line_start = False
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == "R" and text.startswith('R"', i):
            m = re.match(r'R"([^(\s]*)\(', text[i:])
            end = text.find(")" + m.group(1) + '"', i) if m else -1
            j = n if end < 0 else end + len(m.group(1)) + 2
            out.append('""' + re.sub(r"[^\n]", " ", text[i + 2:j]))
            i = j
        elif c in "\"'" and not (c == "'" and i > 0 and text[i - 1].isalnum()):  # 1'000 is a number
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append(c + " " * (j - i - 1) + (c if j < n else ""))
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def matching(text, i):
    """The offset of the brace that closes the one at i."""
    depth = 0
    for j in range(i, len(text)):
        if text[j] == "{":
            depth += 1
        elif text[j] == "}":
            depth -= 1
            if depth == 0:
                return j
    return len(text) - 1


def head_start(text, i, floor):
    """Where the declaration before the brace at i begins: after the last ;,
    { or } before it (not before floor), its leading blanks skipped."""
    j = max(text.rfind(";", floor, i), text.rfind("{", floor, i), text.rfind("}", floor, i), floor - 1) + 1
    while j < i and text[j].isspace():
        j += 1
    return j


def is_function(head):
    """A function body's head: a parameter list, then qualifiers, a trailing
    return type or a constructor's initializer list; not a scope, an
    initializer (= {...}) or a control statement."""
    if not head or SCOPE.match(head) or "(" not in head:
        return False
    if re.match(r"(if|for|while|switch|catch|do|else|return)\b", head):
        return False
    before_paren = head.split("(", 1)[0]
    if "=" in before_paren or head.rstrip().endswith("="):
        return False
    tail = head[head.rfind(")") + 1:].strip()
    qualifiers = r"(const|noexcept|override|final|volatile|&|&&|\s|->\s*[\w:<>,\s*&]+|noexcept\s*\(.*\))*"
    return re.fullmatch(qualifiers, tail) is not None or head_has_initializers(head)


def head_has_initializers(head):
    """A constructor's head: Name(...) : member(...), member{...}."""
    return re.search(r"\)\s*(noexcept\s*)?:\s*\w", head) is not None


def name_of(head):
    """The function's name as written, qualifiers and all (Walk::run)."""
    flat = " ".join(head.split())
    depth, cut = 0, None
    for k, c in enumerate(flat):  # the first parenthesis at template depth 0
        if c == "<":
            depth += 1
        elif c == ">" and depth:
            depth -= 1
        elif c == "(" and depth == 0:
            cut = k
            break
    m = re.search(r"((?:[\w~]+(?:<[^()]*>)?::)*(?:operator\s*[^\s(]+|~?\w+))\s*$", flat[:cut])
    return m.group(1) if m else flat[:cut]


def functions(path):
    """(name, first line, lines) of each function in the file."""
    text = strip(path.read_text(errors="replace"))
    found = []

    def walk(lo, hi, owner):  # the scope between offsets lo and hi; owner: its class, as Name::
        i = lo
        while i < hi:
            b = text.find("{", i, hi)
            if b < 0:
                return
            start = head_start(text, b, lo)
            head = text[start:b].strip()
            end = matching(text, b)
            scope = SCOPE.match(head)
            if scope:
                cls = re.match(r"(?:struct|class|union)\s+(?:\[\[.*?\]\]\s*)?(\w+)", head[scope.start(1):])
                walk(b + 1, end, owner + cls.group(1) + "::" if cls else owner)
            elif is_function(head):
                first = text.count("\n", 0, start) + 1
                last = text.count("\n", 0, end) + 1
                found.append((owner + name_of(head), first, last - first + 1))
            i = end + 1

    walk(0, len(text), "")
    return found


def measured(root):
    for top in PRODUCT:
        for path in sorted((root / top).rglob("*")):
            if path.suffix in (".cpp", ".h") and path.is_file():
                for name, line, lines in functions(path):
                    yield path.relative_to(root).as_posix(), name, line, lines


def table(root):
    """The rows of design.md's table: (names, file, counts, line of design.md)."""
    rows, inside = [], False
    for number, line in enumerate((root / "docs/design.md").read_text().splitlines(), 1):
        if line.startswith("**Functions over 80 lines"):
            inside = True
        elif inside and line.startswith("|") and "`" in line:
            cells = [c.strip() for c in line.strip("|").split("|")]
            names = re.findall(r"`([^`]+)`", cells[0])
            where = re.search(r"\(([^)]+)\)", cells[0])
            counts = [int(x) for x in re.findall(r"\d+", cells[1])]
            rows.append((names, where.group(1) if where else "", counts, number))
        elif inside and line.startswith("## "):
            break
    return rows


def main(argv):
    listing = "--list" in argv
    args = [a for a in argv if a != "--list"]
    root = pathlib.Path(args[0] if args else pathlib.Path(__file__).resolve().parents[2])
    every = list(measured(root))
    if len(every) < 500:
        print(f"only {len(every)} functions found under {root}: is the source folder right?")
        return 1
    long = [f for f in every if f[3] > LIMIT]
    if listing:
        for file, name, line, lines in sorted(long, key=lambda f: -f[3]):
            print(f"{lines:4d}  {name}  {file}:{line}")
        return 0
    problems = []
    named = set()
    for names, file, counts, number in table(root):
        if len(names) != len(counts):
            problems.append(f"docs/design.md:{number}: {len(names)} functions but {len(counts)} line counts")
            continue
        for name, count in zip(names, counts):
            named.add((file, name))
            got = [f[3] for f in every if f[0] == file and (f[1] == name or f[1].endswith("::" + name))]
            if not got:
                problems.append(f"docs/design.md:{number}: no function {name} in {file}")
            elif max(got) <= LIMIT:
                problems.append(f"docs/design.md:{number}: {name} ({file}) is {max(got)} lines now: take its row out")
            elif max(got) != count:
                problems.append(f"docs/design.md:{number}: {name} ({file}) is {max(got)} lines, the table says {count}")
    for file, name, line, lines in long:
        if not any(f == file and (name == n or name.endswith("::" + n)) for f, n in named):
            problems.append(f"{file}:{line}: {name} is {lines} lines, over {LIMIT}: split it, or say in "
                            f"docs/design.md (Functions over 80 lines) why it stays whole")
    for p in problems:
        print(p)
    print(f"function length: {len(every)} functions read, {len(long)} over {LIMIT} lines, "
          f"{len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
