// SPDX-License-Identifier: BSD-3-Clause
#include "crashlab/explore/generator.h"

#include "crashlab/explore/fstests.h"

#include <algorithm>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>

namespace crashlab::explore {

namespace {

const std::vector<std::string> kFiles{"A/foo", "A/bar", "B/foo", "B/bar", "A/C/foo"};
const std::vector<std::string> kDirs{"A", "B", "A/C"};
const std::vector<std::pair<std::string, std::string>> kFilePairs{
    {"A/foo", "A/bar"}, {"A/foo", "B/bar"}, {"A/C/foo", "B/foo"}};
const std::vector<std::pair<std::string, std::string>> kDirRenames{{"A/C", "B/C"}, {"A/C", "A/D"}};
const std::vector<std::pair<std::string, std::string>> kSymlinks{{"A/bar", "foo"}, {"B/bar", "../A/foo"}};

Step persisted(const Op& op, Persist p, const std::string& path = "") { return Step{op, p, path, false, {}}; }

// The persistence calls that fit an operation, none aside.
std::vector<Step> persistence_for(const Op& op) {
  std::vector<Step> out;
  const auto add = [&](Persist p, const std::string& path = "") { out.push_back(persisted(op, p, path)); };
  switch (op.kind) {
    case OpKind::mkdir:
      add(Persist::fsync, op.path);
      add(Persist::fsync, parent_of(op.path));
      break;
    case OpKind::link:
    case OpKind::rename_new:
    case OpKind::rename_over:
      add(Persist::fsync, op.second);
      add(Persist::fdatasync, op.second);
      add(Persist::fsync, parent_of(op.path));
      if (parent_of(op.second) != parent_of(op.path)) add(Persist::fsync, parent_of(op.second));
      break;
    case OpKind::rename_dir:
      add(Persist::fsync, op.second);
      add(Persist::fsync, parent_of(op.path));
      if (parent_of(op.second) != parent_of(op.path)) add(Persist::fsync, parent_of(op.second));
      break;
    case OpKind::unlink:
    case OpKind::rmdir:
    case OpKind::symlink:
      add(Persist::fsync, parent_of(op.path));
      break;
    default:  // an operation on a file that is there afterwards
      add(Persist::fsync, op.path);
      add(Persist::fdatasync, op.path);
      add(Persist::fsync, parent_of(op.path));
  }
  add(Persist::sync);
  return out;
}

// The variants of one operation over the file set.
std::vector<Op> variants(OpKind k) {
  std::vector<Op> out;
  switch (k) {
    case OpKind::mkdir:
      for (const std::string& d : kDirs) out.push_back({k, d, ""});
      break;
    case OpKind::rmdir:
      for (const std::string& d : {std::string("A/C"), std::string("B")}) out.push_back({k, d, ""});
      break;
    case OpKind::link:
    case OpKind::rename_new:
    case OpKind::rename_over:
      for (const auto& [a, b] : kFilePairs) out.push_back({k, a, b});
      break;
    case OpKind::rename_dir:
      for (const auto& [a, b] : kDirRenames) out.push_back({k, a, b});
      break;
    case OpKind::symlink:
      for (const auto& [at, target] : kSymlinks) out.push_back({k, at, target});
      break;
    case OpKind::fill:
    case OpKind::nothing:
      break;
    case OpKind::chmod:
      for (const std::string& f : kFiles) out.push_back({k, f, "0600"});
      break;
    default:
      for (const std::string& f : kFiles) out.push_back({k, f, ""});
  }
  return out;
}

// What the steps so far have left, as far as dependencies go: names lead to
// inodes, so that a hard link shares what is done to the file under either
// name, and a rename of one link over another of the same file does nothing
// (rename(2): both names stay).
struct Node {
  bool symlink = false;
  bool filled = false;  // at least 8 KiB written by fill
  bool xattr = false;
};

class Tree {
 public:
  explicit Tree(std::vector<Step>& out) : out_(out) {}

  bool is_dir(const std::string& p) const { return p == "." || dirs_.count(p) != 0; }

  void need_dir(const std::string& d) {
    if (is_dir(d)) return;
    need_dir(parent_of(d));
    need_absent(d);
    setup({OpKind::mkdir, d, ""});
  }
  void need_absent(const std::string& p) {
    if (files_.count(p) != 0) setup({OpKind::unlink, p, ""});
    if (dirs_.count(p) == 0) return;
    need_empty(p);
    setup({OpKind::rmdir, p, ""});
  }
  void need_empty(const std::string& d) {
    const std::string prefix = d + "/";
    std::vector<std::string> inside;
    for (const auto& [p, n] : files_)
      if (p.rfind(prefix, 0) == 0 && p.find('/', prefix.size()) == std::string::npos) inside.push_back(p);
    for (const std::string& p : dirs_)
      if (p.rfind(prefix, 0) == 0 && p.find('/', prefix.size()) == std::string::npos) inside.push_back(p);
    for (const std::string& p : inside) need_absent(p);
  }
  void need_file(const std::string& f, bool filled, bool xattr = false) {
    need_dir(parent_of(f));
    if (dirs_.count(f) != 0 || (files_.count(f) != 0 && node(f).symlink)) need_absent(f);
    if (files_.count(f) == 0) setup({OpKind::creat, f, ""});
    if (filled && !node(f).filled) setup({OpKind::fill, f, ""});
    if (xattr && !node(f).xattr) setup({OpKind::setxattr, f, ""});
  }

  void prepare(const Op& op) {
    switch (op.kind) {
      case OpKind::creat:
      case OpKind::mkdir:
      case OpKind::symlink:
        need_dir(parent_of(op.path));
        need_absent(op.path);
        break;
      case OpKind::setxattr:
      case OpKind::unlink:
      case OpKind::chmod:
        need_file(op.path, false);
        break;
      case OpKind::removexattr:
        need_file(op.path, false, true);
        break;
      case OpKind::link:
      case OpKind::rename_new:
        need_file(op.path, true);
        need_dir(parent_of(op.second));
        need_absent(op.second);
        break;
      case OpKind::rename_over:
        need_file(op.path, true);
        need_file(op.second, true);
        break;
      case OpKind::rmdir:
        need_dir(op.path);
        need_empty(op.path);
        break;
      case OpKind::rename_dir:
        need_dir(op.path);
        need_dir(parent_of(op.second));
        need_absent(op.second);
        break;
      default:
        need_file(op.path, true);
    }
  }

  void apply(const Op& op) {
    switch (op.kind) {
      case OpKind::creat: files_[op.path] = new_inode(Node{}); break;
      case OpKind::mkdir: dirs_.insert(op.path); break;
      case OpKind::fill: node(op.path).filled = true; break;
      case OpKind::truncate_shrink: node(op.path).filled = false; break;
      case OpKind::link: files_[op.second] = files_.at(op.path); break;
      case OpKind::unlink: files_.erase(op.path); break;
      case OpKind::rmdir: dirs_.erase(op.path); break;
      case OpKind::rename_new:
      case OpKind::rename_over:
        if (files_.count(op.second) != 0 && files_.at(op.second) == files_.at(op.path)) break;  // one file: no change
        files_[op.second] = files_.at(op.path);
        files_.erase(op.path);
        break;
      case OpKind::rename_dir: {
        const std::string from = op.path + "/";
        std::map<std::string, std::size_t> files;
        for (const auto& [p, n] : files_) files[p.rfind(from, 0) == 0 ? op.second + "/" + p.substr(from.size()) : p] = n;
        files_ = std::move(files);
        std::set<std::string> dirs;
        for (const std::string& p : dirs_)
          dirs.insert(p == op.path ? op.second : p.rfind(from, 0) == 0 ? op.second + "/" + p.substr(from.size()) : p);
        dirs_ = std::move(dirs);
        break;
      }
      case OpKind::symlink: files_[op.path] = new_inode(Node{true, false, false}); break;
      case OpKind::setxattr: node(op.path).xattr = true; break;
      case OpKind::removexattr: node(op.path).xattr = false; break;
      default: break;  // the other data operations leave a filled file filled
    }
  }

  void setup(const Op& op) {
    out_.push_back(Step{op, Persist::none, "", true, {}});
    apply(op);
  }

 private:
  Node& node(const std::string& f) { return inodes_.at(files_.at(f)); }
  std::size_t new_inode(const Node& n) {
    inodes_.push_back(n);
    return inodes_.size() - 1;
  }

  std::vector<Step>& out_;
  std::set<std::string> dirs_;
  std::map<std::string, std::size_t> files_;  // name: its inode, an index into inodes_
  std::vector<Node> inodes_;
};

}  // namespace

namespace {

bool buffered_write(OpKind k) {
  return k == OpKind::write_append || k == OpKind::write_overwrite || k == OpKind::write_unaligned;
}

// ACE drops the sequences of buffered writes alone ("write" thrice).
bool not_writes_alone(const std::vector<Step>& core) {
  return !std::all_of(core.begin(), core.end(), [](const Step& s) { return buffered_write(s.op.kind); });
}

// seq3writegenerator: the first operation an append (the file starts
// empty there), and not buffered writes alone.
bool data_rule(const std::vector<Step>& core) {
  return !core.empty() && core.front().op.kind == OpKind::write_append && not_writes_alone(core);
}

// seq3nestedgenerator: each operation after the first names a path that
// one before it named.
bool nested_rule(const std::vector<Step>& core) {
  std::set<std::string> named;
  for (std::size_t i = 0; i < core.size(); ++i) {
    const Op& op = core[i].op;
    if (i > 0 && named.count(op.path) == 0 && (op.second.empty() || named.count(op.second) == 0)) return false;
    named.insert(op.path);
    if (!op.second.empty()) named.insert(op.second);
  }
  return true;
}

}  // namespace

Restriction ace_subset(const std::string& name) {
  if (name == "seq-3-data")
    return {{OpKind::write_append, OpKind::write_overwrite, OpKind::write_unaligned, OpKind::write_direct,
             OpKind::mmap_write, OpKind::falloc, OpKind::falloc_keep_size, OpKind::falloc_punch, OpKind::falloc_zero},
            {"A/foo"},
            false,
            true,
            data_rule};
  if (name == "seq-3-metadata")
    return {{OpKind::write_append, OpKind::write_unaligned, OpKind::link, OpKind::unlink, OpKind::rename_new,
             OpKind::rename_over, OpKind::truncate_shrink},
            {"A", "B", "A/foo", "A/bar", "B/foo", "B/bar"},
            true,
            false,
            not_writes_alone};
  if (name == "seq-3-nested")
    return {{OpKind::link, OpKind::rename_new, OpKind::rename_over, OpKind::rename_dir},
            {"A", "B", "A/C", "B/C", "A/D", "A/foo", "A/bar", "B/foo", "B/bar", "A/C/foo"},
            true,
            false,
            nested_rule};
  throw std::invalid_argument("ACE's seq-3 subsets are seq-3-data, seq-3-metadata and seq-3-nested, not " + name);
}

int bound_named(const std::string& bound) {
  if (bound == "seq-1") return 1;
  if (bound == "seq-2") return 2;
  if (bound == "seq-3" || bound == "seq-3-data" || bound == "seq-3-metadata" || bound == "seq-3-nested") return 3;
  throw std::invalid_argument("--bound " + (bound.empty() ? std::string("''") : bound) +
                              ": expected seq-1, seq-2, seq-3, seq-3-data, seq-3-metadata, seq-3-nested or fstests");
}

Generator generator_named(const std::string& bound, const std::vector<OpKind>& kinds) {
  if (bound.rfind("seq-3-", 0) == 0) {
    Restriction r = ace_subset(bound);
    if (!kinds.empty()) {
      std::vector<OpKind> both;
      for (const OpKind k : r.kinds)
        if (std::find(kinds.begin(), kinds.end(), k) != kinds.end()) both.push_back(k);
      if (both.empty()) throw std::invalid_argument("--bound " + bound + ": none of its operations is among those given (--ops)");
      r.kinds = both;
    }
    return Generator(3, r);
  }
  if (bound != "fstests") return Generator(bound_named(bound), kinds);
  std::vector<Workload> listed;
  for (const Scenario& s : fstests_scenarios()) {
    const bool drawn = std::all_of(s.steps.begin(), s.steps.end(), [&](const Step& step) {
      return step.setup || step.op.kind == OpKind::nothing || kinds.empty() ||
             std::find(kinds.begin(), kinds.end(), step.op.kind) != kinds.end();
    });
    if (!drawn) continue;
    Workload w;
    w.ordinal = listed.size();
    w.name = s.name;
    w.steps = s.steps;
    listed.push_back(std::move(w));
  }
  if (listed.empty())
    throw std::invalid_argument("--bound fstests: no scenario's own steps are all among the operations given (--ops)");
  return Generator(std::move(listed));
}

std::vector<OpKind> op_kinds_named(const std::string& list) {
  std::vector<OpKind> out;
  std::stringstream in(list);
  for (std::string name; std::getline(in, name, ',');) out.push_back(op_kind_named(name));
  return out;
}

std::vector<Step> with_setup(const std::vector<Step>& core) {
  std::vector<Step> out;
  Tree tree(out);
  for (std::size_t i = 0; i < core.size(); ++i) {
    tree.prepare(core[i].op);
    if (i == 0 && !out.empty()) out.back().persist = Persist::sync;  // the core starts from a durable tree
    out.push_back(core[i]);
    tree.apply(core[i].op);
  }
  return out;
}

Generator::Generator(int core_ops, const std::vector<OpKind>& kinds)
    : Generator(core_ops, Restriction{kinds, {}, true, true, nullptr}) {}

Generator::Generator(std::vector<Workload> listed) : core_ops_(0), listed_(std::move(listed)) {
  count_ = listed_.size();
}

Generator::Generator(int core_ops, const Restriction& r) : core_ops_(core_ops) {
  if (core_ops < 1 || core_ops > 3) throw std::invalid_argument("a bound of 1 to 3 core operations (seq-1, seq-2, seq-3)");
  const auto allowed = [&r](const std::string& name) {
    return name.empty() || r.names.empty() || std::find(r.names.begin(), r.names.end(), name) != r.names.end();
  };
  for (const OpKind k : r.kinds.empty() ? all_op_kinds() : r.kinds)
    for (const Op& op : variants(k)) {
      if (!allowed(op.path) || (k != OpKind::symlink && k != OpKind::chmod && !allowed(op.second))) continue;
      choices_.push_back(persisted(op, Persist::none));
      for (const Step& s : persistence_for(op)) {
        if ((s.persist == Persist::sync && !r.sync) || (s.persist == Persist::fdatasync && !r.fdatasync) ||
            !allowed(s.persist_path))
          continue;
        last_.push_back(choices_.size());
        choices_.push_back(s);
      }
    }
  if (last_.empty()) throw std::invalid_argument("the restriction leaves no operation with a persistence call");
  count_ = last_.size();
  for (int i = 1; i < core_ops; ++i) count_ *= choices_.size();
  if (r.keep == nullptr) return;
  for (std::uint64_t plain = 0; plain < count_; ++plain)
    if (r.keep(core_at(plain))) kept_.push_back(plain);
  count_ = kept_.size();
}

Workload Generator::at(std::uint64_t ordinal) const {
  if (ordinal >= count_)
    throw std::out_of_range("workload " + std::to_string(ordinal) + ": this bound has " + std::to_string(count_) +
                            (count_ == 0 ? std::string() : " (0 to " + std::to_string(count_ - 1) + ")"));
  if (core_ops_ == 0) return listed_[static_cast<std::size_t>(ordinal)];
  const std::vector<Step> core = core_at(kept_.empty() ? ordinal : kept_[static_cast<std::size_t>(ordinal)]);
  Workload w;
  w.ordinal = ordinal;
  w.name = name_of(core);
  w.steps = with_setup(core);
  return w;
}

std::vector<Step> Generator::core_at(std::uint64_t plain) const {
  // Mixed radix, the first core step most significant; the last step's digit
  // counts only the choices whose persistence is not none.
  std::vector<std::size_t> digits(static_cast<std::size_t>(core_ops_));
  std::uint64_t rest = plain;
  digits[digits.size() - 1] = last_[rest % last_.size()];
  rest /= last_.size();
  for (std::size_t i = digits.size() - 1; i-- > 0;) {
    digits[i] = static_cast<std::size_t>(rest % choices_.size());
    rest /= choices_.size();
  }
  std::vector<Step> core;
  for (const std::size_t d : digits) core.push_back(choices_[d]);
  return core;
}

}  // namespace crashlab::explore
