// SPDX-License-Identifier: BSD-3-Clause
#include "crashlab/explore/workload.h"

#include <stdexcept>

namespace crashlab::explore {

namespace {

struct Named {
  OpKind kind;
  const char* name;
};

constexpr Named kNames[] = {
    {OpKind::creat, "creat"},
    {OpKind::mkdir, "mkdir"},
    {OpKind::write_append, "write_append"},
    {OpKind::write_overwrite, "write_overwrite"},
    {OpKind::write_unaligned, "write_unaligned"},
    {OpKind::write_direct, "write_direct"},
    {OpKind::mmap_write, "mmap_write"},
    {OpKind::falloc, "falloc"},
    {OpKind::falloc_keep_size, "falloc_keep_size"},
    {OpKind::falloc_punch, "falloc_punch"},
    {OpKind::falloc_zero, "falloc_zero"},
    {OpKind::truncate_shrink, "truncate_shrink"},
    {OpKind::truncate_grow, "truncate_grow"},
    {OpKind::link, "link"},
    {OpKind::unlink, "unlink"},
    {OpKind::rmdir, "rmdir"},
    {OpKind::rename_new, "rename_new"},
    {OpKind::rename_over, "rename_over"},
    {OpKind::rename_dir, "rename_dir"},
    {OpKind::symlink, "symlink"},
    {OpKind::setxattr, "setxattr"},
    {OpKind::removexattr, "removexattr"},
    {OpKind::fill, "fill"},
    {OpKind::chmod, "chmod"},
    {OpKind::nothing, "nothing"},
};

}  // namespace

const char* to_string(OpKind kind) {
  for (const Named& n : kNames)
    if (n.kind == kind) return n.name;
  return "unknown";
}

const char* to_string(Persist persist) {
  switch (persist) {
    case Persist::none: return "none";
    case Persist::fsync: return "fsync";
    case Persist::fdatasync: return "fdatasync";
    case Persist::sync: return "sync";
  }
  return "unknown";
}

const std::vector<OpKind>& all_op_kinds() {
  static const std::vector<OpKind> kinds = [] {
    std::vector<OpKind> out;
    for (const Named& n : kNames)
      if (n.kind != OpKind::fill && n.kind != OpKind::nothing) out.push_back(n.kind);
    return out;
  }();
  return kinds;
}

OpKind op_kind_named(const std::string& name) {
  for (const OpKind k : all_op_kinds())
    if (name == to_string(k)) return k;
  std::string known;
  for (const OpKind k : all_op_kinds()) known += (known.empty() ? "" : ", ") + std::string(to_string(k));
  throw std::invalid_argument("no operation '" + name + "' (there are: " + known + ")");
}

std::string describe(const Op& op) {
  std::string out = std::string(to_string(op.kind)) + "(" + op.path;
  if (!op.second.empty()) out += "," + op.second;
  return out + ")";
}

std::string describe_persist(const Step& step) {
  if (step.persist == Persist::fsync || step.persist == Persist::fdatasync)
    return std::string(to_string(step.persist)) + "(" + step.persist_path + ")";
  return to_string(step.persist);
}

// Built by appending: GCC 12 at -O3 warns (-Wrestrict) on a literal + a
// temporary string.
std::string describe_step(const Step& step) {
  if (step.op.kind == OpKind::nothing) return describe_persist(step);
  std::string out = describe(step.op);
  if (step.persist != Persist::none) {
    out += ' ';
    out += describe_persist(step);
  }
  return out;
}

std::string name_of(const std::vector<Step>& core) {
  std::string out;
  for (const Step& s : core) {
    if (!out.empty()) out += "; ";
    out += describe_step(s);
  }
  return out;
}

std::string describe_steps(const std::vector<Step>& steps) {
  std::string out;
  for (const Step& s : steps) {
    if (!out.empty()) out += "; ";
    if (s.setup) out += "setup: ";
    out += describe_step(s);
  }
  return out;
}

std::string parent_of(const std::string& path) {
  const std::size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

}  // namespace crashlab::explore
