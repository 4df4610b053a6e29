// SPDX-License-Identifier: BSD-3-Clause
// A generated workload of the crash lab's explorer (nvj crash explore), in
// the spirit of CrashMonkey's ACE: a few core operations over a small, fixed
// file set, each followed by a persistence call or none (the last never
// none), preceded by the setup operations their dependencies need (a file
// is created before it is written). Pure: the names and what each operation
// does; the explorer's runner (tools/nvj/explore/) carries them out.
//
// The file set: directories A, B and A/C; files A/foo, A/bar, B/foo, B/bar
// and A/C/foo. Every path an operation names is in it, but for the new
// names a rename of A/C gives (B/C, A/D) and the targets of symlinks.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "crashlab/facts/fact.h"

namespace crashlab::explore {

enum class OpKind {
  creat,            // creat(F): an empty file
  mkdir,            // mkdir(D)
  write_append,     // 4 KiB appended to F's 8 KiB (written at setup)
  write_overwrite,  // F's second 4 KiB block overwritten in place
  write_unaligned,  // 5000 bytes at offset 3000 of F's 8 KiB
  write_direct,     // O_DIRECT: F's first 4 KiB block overwritten
  mmap_write,       // F's 8 KiB mapped, 100 bytes changed at 4000, msync(MS_SYNC)
  falloc,           // fallocate(F, 0, 8 KiB, 8 KiB): past the end, the size grows
  falloc_keep_size, // FALLOC_FL_KEEP_SIZE over 8 KiB past the end
  falloc_punch,     // FALLOC_FL_PUNCH_HOLE | KEEP_SIZE: F's second 4 KiB block
  falloc_zero,      // FALLOC_FL_ZERO_RANGE: bytes 1000..5000 of F
  truncate_shrink,  // F's 8 KiB cut to 3000 bytes
  truncate_grow,    // F's 8 KiB grown to 20000 bytes
  link,             // link(F, G), G a new name
  unlink,           // unlink(F)
  rmdir,            // rmdir(D), D empty
  rename_new,       // rename(F, G), G a new name
  rename_over,      // rename(F, G) over G, an existing file
  rename_dir,       // rename(D, E), a directory to a new name
  symlink,          // symlink(target, F)
  setxattr,         // fsetxattr(F, "user.nvj", 16 bytes)
  removexattr,      // fremovexattr(F, "user.nvj")
  fill,             // setup only: F's first 8 KiB written (its size at least 8 KiB)
  chmod,            // chmod(F, MODE): `second` the permission bits in octal ("0600")
  nothing,          // no operation: a step that is its persistence call alone (listed
                    // workloads: fsync(A) then fsync(B), or fsync then sync)
};

enum class Persist {
  none,
  fsync,      // fsync(path): a file or a directory
  fdatasync,  // fdatasync(path): a file
  sync,       // sync()
};

struct Op {
  OpKind kind = OpKind::creat;
  std::string path;    // the object: F or D (for symlink: the link's path)
  std::string second;  // link, rename: the new name; symlink: the target
  bool operator==(const Op&) const = default;
};

// What a named test asserts once a step has returned (fstests.h): a fact of
// `kind` about `path` (an entry: `path`'s name in its parent), its value
// read from the live tree then, citing the rule `rule` ("generic/335").
// Kinds: file (size and content), entry, absent, mode, nlink, symlink and
// xattr (user.nvj's value, or noxattr when the file has none).
struct Expect {
  FactKind kind = FactKind::file;
  std::string path;
  std::string rule;
  bool operator==(const Expect&) const = default;
};

struct Step {
  Op op;
  Persist persist = Persist::none;
  std::string persist_path;  // fsync, fdatasync: what is synced
  bool setup = false;        // a dependency, not a core operation
  std::vector<Expect> expect;  // listed workloads: what their test asserts after this step
  bool operator==(const Step&) const = default;
};

struct Workload {
  std::uint64_t ordinal = 0;  // its place in the enumeration of its bound
  std::string name;           // the core steps: "write_append(A/foo) fsync(A/foo); unlink(B/bar) sync"
  std::vector<Step> steps;    // setup first, then the core steps
};

const char* to_string(OpKind kind);
const char* to_string(Persist persist);
// "write_append(A/foo)", "rename_over(A/foo,B/bar)"
std::string describe(const Op& op);
// "fsync(A/foo)", "sync", "none"
std::string describe_persist(const Step& step);
// "write_append(A/foo) fsync(A/foo)", "creat(A/foo)": the operation and its
// persistence call, if any.
std::string describe_step(const Step& step);
// The core steps' names joined by "; ": a workload's name.
std::string name_of(const std::vector<Step>& core);
// "setup: creat(A/foo); write_append(A/foo) fsync(A/foo)": every step.
std::string describe_steps(const std::vector<Step>& steps);

// The operation named `name` ("write_append"): std::invalid_argument with
// the names there are.
OpKind op_kind_named(const std::string& name);
// Every operation, in the enumeration's order.
const std::vector<OpKind>& all_op_kinds();

// Parent directory of a path of the set ("." for A).
std::string parent_of(const std::string& path);

}  // namespace crashlab::explore
