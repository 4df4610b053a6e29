#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# bench/f4/render.py ROWS: table.sh's rows (DIR/rows.jsonl, one JSON object
# a run) as its Markdown table, one row per kernel, layout and commit path.
import json, os, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
print("| kernel | layout | commit path | runs | failing states (of states checked; of those after f's fact), each run | stale in f alone | the kernel's mount agreeing | the cause (first failing state, minimized) |")
print("|---|---|---|---:|---|---|---|---|")
groups = {}
for r in rows:
    groups.setdefault((r["kernel"], r["layout"], r["path"]), []).append(r)
for (k, l, p), rs in groups.items():
    ok = [r for r in rs if "error" not in r]
    counts = ", ".join(f"{r['failing']} of {r['states']:,} ({r['after_fact']:,})" for r in ok) + ("".join(f"; run {r['run']}: could not run" for r in rs if "error" in r))
    alone = "all" if ok and all(r["stale_alone"] == r["failing"] for r in ok) else ", ".join(str(r["stale_alone"]) for r in ok)
    checked = sum(r["kernel_checked"] for r in ok)
    agreed = sum(r["kernel_agreed"] for r in ok)
    causes = {", ".join(f"{e} export's {reg} write of {n // 1024} KiB" for e, reg, n in r["cause"]) for r in ok if r["cause"]}
    cause = ("dropping " + "; ".join(sorted(causes))) if causes else ""
    release = next((r["release"] for r in ok if r.get("release")), None)
    k = os.path.basename(k.rstrip("/")) if "/" in k else k  # a folder a kernel was built in: its name
    k = f"{k} ({release})" if release else k
    print(f"| {k} | {l} | {p} | {len(rs)} | {counts} | {alone if any(r['failing'] for r in ok) else ''} | "
          f"{f'{agreed} of {checked}' if checked else ''} | {cause} |")
