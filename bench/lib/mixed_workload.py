#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""A random multi-process workload of mixed metadata and data operations.

Usage: mixed_workload.py [--procs N] [--ops N] [--seed S] DIR

N processes (default 4) each do N operations (default 300) drawn by the seed:
creates, writes (appends and overwrites in place), truncates (down and up),
hard links, renames (over existing names too, into a directory all
processes share), unlinks, extended attributes (small, and large enough for
an attribute block), mkdir and rmdir, and now and then fsync, fdatasync or
sync. Each process works in DIR/pN and DIR/shared; an operation a race with
another process makes fail (a name gone) is skipped. No facts are posted:
what a crash check judges of it is the structure (e2fsck) and what a mount
reads. The same seed does the same operations, not the same interleaving.
"""
import argparse
import errno
import os
import random
import sys


def worker(root: str, proc: int, ops: int, seed: int) -> None:
    r = random.Random(seed * 1000 + proc)
    own = os.path.join(root, f"p{proc}")
    shared = os.path.join(root, "shared")
    dirs = [own, shared]
    names = []  # paths this process made and believes exist
    subdirs = []

    def new_name() -> str:
        return os.path.join(r.choice(dirs + subdirs), f"f{proc}_{r.randrange(10**6)}")

    def pick() -> str:
        return r.choice(names) if names else ""

    for _ in range(ops):
        op = r.choice(["create", "create", "write", "write", "truncate", "link", "rename", "unlink",
                       "setxattr", "removexattr", "mkdir", "rmdir", "fsync", "fdatasync", "sync"])
        try:
            if op == "create" or not names and op not in ("mkdir", "sync"):
                path = new_name()
                with open(path, "wb") as f:
                    f.write(os.urandom(r.randrange(0, 12288)))
                names.append(path)
            elif op == "write":
                path = pick()
                with open(path, "r+b") as f:
                    size = os.fstat(f.fileno()).st_size
                    f.seek(r.randrange(0, size + 1) if r.random() < 0.5 else size)
                    f.write(os.urandom(r.randrange(1, 8192)))
            elif op == "truncate":
                os.truncate(pick(), r.randrange(0, 20480))
            elif op == "link":
                path = new_name()
                os.link(pick(), path)
                names.append(path)
            elif op == "rename":
                source = pick()
                target = pick() if r.random() < 0.3 else new_name()
                os.rename(source, target)
                names.remove(source)
                if target not in names:
                    names.append(target)
            elif op == "unlink":
                path = pick()
                os.unlink(path)
                names.remove(path)
            elif op == "setxattr":
                os.setxattr(pick(), f"user.k{r.randrange(4)}", os.urandom(r.choice([16, 200, 3000])))
            elif op == "removexattr":
                os.removexattr(pick(), f"user.k{r.randrange(4)}")
            elif op == "mkdir":
                path = os.path.join(r.choice(dirs), f"d{proc}_{r.randrange(10**6)}")
                os.mkdir(path)
                subdirs.append(path)
            elif op == "rmdir" and subdirs:
                path = r.choice(subdirs)
                os.rmdir(path)
                subdirs.remove(path)
            elif op in ("fsync", "fdatasync"):
                fd = os.open(pick(), os.O_RDONLY)
                try:
                    (os.fsync if op == "fsync" else os.fdatasync)(fd)
                finally:
                    os.close(fd)
            elif op == "sync" and r.random() < 0.3:
                os.sync()
        except OSError as e:
            if e.errno not in (errno.ENOENT, errno.ENODATA, errno.ENOTEMPTY, errno.EEXIST, errno.EISDIR,
                               errno.ENOTDIR, errno.ENOSPC):
                raise
            for gone in [n for n in names if not os.path.lexists(n)]:
                names.remove(gone)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    p.add_argument("--procs", type=int, default=4)
    p.add_argument("--ops", type=int, default=300)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("dir")
    a = p.parse_args()
    os.makedirs(os.path.join(a.dir, "shared"), exist_ok=True)
    for i in range(a.procs):
        os.makedirs(os.path.join(a.dir, f"p{i}"), exist_ok=True)
    children = []
    for i in range(a.procs):
        pid = os.fork()
        if pid == 0:
            try:
                worker(a.dir, i, a.ops, a.seed)
                os._exit(0)
            except BaseException as e:  # the child must not return into the parent's code
                print(f"mixed_workload.py: process {i}: {e}", file=sys.stderr)
                os._exit(1)
        children.append(pid)
    failed = 0
    for pid in children:
        _, status = os.waitpid(pid, 0)
        failed += status != 0
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
