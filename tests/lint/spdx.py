#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Every source file of the project says its licence in its first lines:
"SPDX-License-Identifier: BSD-3-Clause" (LICENSE). Sources are the C++
files, the shell, Python, CMake, Slurm and Kubernetes files, the
Dockerfile and ./run; generated outputs (plots, tables, JSON) and
documents are not. Prints each file without it and exits 1.

Usage: spdx.py [SOURCE_DIR]"""
import pathlib
import sys

root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).resolve().parents[2])
SUFFIXES = {".cpp", ".h", ".sh", ".py", ".cmake", ".sbatch", ".yaml"}
NAMES = {"CMakeLists.txt", "Dockerfile", "run"}
SKIP = {".git", "docs"}  # docs/ holds documents and generated plots only
TAG = "SPDX-License-Identifier: BSD-3-Clause"


def sources():
    for path in sorted(root.rglob("*")):
        parts = path.relative_to(root).parts
        if parts[0] in SKIP or parts[0].startswith("build") or not path.is_file():
            continue
        if path.suffix in SUFFIXES or path.name in NAMES:
            yield path


checked = missing = 0
for path in sources():
    checked += 1
    head = path.read_text(errors="replace").splitlines()[:3]
    if not any(TAG in line for line in head):
        print(f"{path.relative_to(root)}: no '{TAG}' in its first 3 lines")
        missing += 1
if checked < 100:
    print(f"only {checked} sources found: is the source folder right?")
    sys.exit(1)
print(f"spdx: {checked} sources checked, {missing} without the identifier")
sys.exit(1 if missing else 0)
