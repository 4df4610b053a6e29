// SPDX-License-Identifier: BSD-3-Clause
#include "crashlab/explore/oracle.h"

#include "crashlab/explore/fstests.h"

#include <stdexcept>

namespace crashlab::explore {

namespace {

using crashlab::Fact;
using crashlab::FactKind;

const char* const kFsyncFile = "fsync-file";
const char* const kFdatasyncFile = "fdatasync-file";
const char* const kFsyncDir = "fsync-dir";
const char* const kSync = "sync";
const char* const kAutoDaAlloc = "ext4-auto-da-alloc-rename";
const char* const kRenameKeeps = "rename-keeps";
const char* const kNoStale = "no-stale-data";
const char* const kFsyncFileName = "fsync-file-name";
const char* const kFsyncFileXattr = "fsync-file-xattr";
const char* const kFsyncDirSymlink = "fsync-dir-symlink";
const char* const kFsyncFileLinks = "fsync-file-links";
const char* const kFsyncFileUnlinked = "fsync-file-unlinked";
const char* const kFsyncFileRenamed = "fsync-file-renamed";
constexpr std::size_t kMaxLabel = 1024;  // the server's bound on a mark's label

Fact fact(FactKind kind, const std::string& path, const std::string& second = "") {
  return Fact{kind, path, second, 0, 0};
}

std::string name_in(const std::string& path) {
  const std::size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

bool under(const std::string& path, const std::string& dir) {
  return path.size() > dir.size() && path.compare(0, dir.size(), dir) == 0 && path[dir.size()] == '/';
}

// Writes that keep the replace-by-rename rule: allocating new blocks, as
// auto_da_alloc forces them out.
bool appends(OpKind k) { return k == OpKind::fill || k == OpKind::write_append || k == OpKind::creat; }

const char* type_name(LiveEntry::Type t) {
  return t == LiveEntry::Type::file ? "file" : t == LiveEntry::Type::dir ? "dir" : "symlink";
}

bool changes_content(OpKind k) {
  switch (k) {
    case OpKind::fill:
    case OpKind::write_append:
    case OpKind::write_overwrite:
    case OpKind::write_unaligned:
    case OpKind::write_direct:
    case OpKind::mmap_write:
    case OpKind::falloc:
    case OpKind::falloc_keep_size:
    case OpKind::falloc_punch:
    case OpKind::falloc_zero:
    case OpKind::truncate_shrink:
    case OpKind::truncate_grow:
      return true;
    default:
      return false;
  }
}

// A file's content under `path`: its size and CRC-32C.
void add_content(std::vector<RuledFact>& out, const std::string& path, const LiveEntry& e, const char* rule_id) {
  Fact f = fact(FactKind::file, path);
  f.size = e.size;
  f.crc32c = e.crc;
  out.push_back({f, rule_id});
}

// A file's attribute user.nvj: its size and CRC-32C, or its absence.
Fact xattr_fact(const std::string& path, const LiveEntry& e) {
  Fact x = fact(e.has_xattr ? FactKind::xattr : FactKind::noxattr, path, "user.nvj");
  x.size = e.xattr_size;
  x.crc32c = e.xattr_crc;
  return x;
}

// Its link count.
Fact nlink_fact(const std::string& path, const LiveEntry& e) {
  Fact links = fact(FactKind::nlink, path);
  links.size = e.nlink;
  return links;
}

// Its type and mode; with `all` (sync), its link count (not a
// directory's: the filesystems count a directory's links their own way),
// a symlink's target and a file's attribute.
void add_inode_facts(std::vector<RuledFact>& out, const std::string& path, const LiveEntry& e, bool all,
                     const char* rule_id) {
  Fact mode = fact(FactKind::mode, path, type_name(e.type));
  mode.size = e.mode;
  out.push_back({mode, rule_id});
  if (!all) return;
  if (e.type != LiveEntry::Type::dir) out.push_back({nlink_fact(path, e), rule_id});
  if (e.type == LiveEntry::Type::symlink) out.push_back({fact(FactKind::symlink, path, e.target), rule_id});
  if (e.type != LiveEntry::Type::file) return;
  out.push_back({xattr_fact(path, e), rule_id});
}

}  // namespace

const std::vector<Rule>& rules() {
  static const std::vector<Rule> table{
      {kFsyncFile, "after fsync(F) returns, F's data and metadata (its size, type and mode) are durable",
       "POSIX.1-2017 fsync(); Linux man-pages fsync(2)"},
      {kFdatasyncFile, "after fdatasync(F) returns, F's data and the metadata needed to read it (its size) are durable",
       "POSIX.1-2017 fdatasync(); Linux man-pages fdatasync(2)"},
      {kFsyncDir, "after fsync(D) returns, D's entries are durable: the names in it are there, the names removed from it are not",
       "Linux man-pages fsync(2), NOTES (an explicit fsync() on a file descriptor for the directory)"},
      {kSync,
       "after sync() returns, every file's data and metadata (size, type, mode, link count, a symlink's target, "
       "extended attributes) and every directory's entries are durable",
       "Linux man-pages sync(2) (on Linux, sync() waits for the writes it starts)"},
      {kRenameKeeps,
       "a durable name renamed is found under the old name or the new one, never under neither (the new name, if "
       "it existed, is replaced whole)",
       "POSIX.1-2017 rename() (the new name refers to the old file or the new throughout); Linux "
       "Documentation/filesystems/ext4/journal.rst (metadata changes are journalled, so a crash leaves the rename "
       "done or not)"},
      {kAutoDaAlloc,
       "in data=ordered with auto_da_alloc, a file renamed over an existing one has its new data on disk before the "
       "rename commits",
       "Linux Documentation/admin-guide/ext4.rst, auto_da_alloc"},
      {kNoStale,
       "a file's bytes within its size are never another file's old data: each of its blocks (the filesystem's "
       "block size) holds zeroes or what this name's files held there (ext4 but in data=writeback, XFS, btrfs)",
       "Linux Documentation/admin-guide/ext4.rst, data=ordered (data written out before its metadata commits; "
       "data=writeback alone may show old data after a crash); XFS and btrfs by design (unwritten extents and "
       "sizes moved on at I/O completion; copy on write)"},
      {kFsyncFileName,
       "after fsync(F) returns, the name F was opened by is durable, if its directory's own name is (a new file's "
       "name; the new name a rename gave it, not one it replaced)",
       "fstests generic/342 and generic/376 (a new file under a name just renamed away, fsynced: it is there), "
       "generic/322 (a file renamed, fsynced: under its new name), run on ext4, XFS, btrfs and f2fs; POSIX does "
       "not promise it (Linux man-pages fsync(2), NOTES)",
       "tested"},
      {kFsyncFileXattr,
       "after fsync(F) returns, F's extended attributes are durable: the value set, or the attribute's absence once "
       "removed",
       "fstests generic/066 (an attribute removed, the file fsynced: it stays removed), generic/489 and generic/745 "
       "(attributes set, the file fsynced: there, with their values); generic tests, run on ext4, XFS, btrfs and "
       "f2fs; fsync(2) does not name extended attributes",
       "tested"},
      {kFsyncDirSymlink,
       "after fsync(D) returns, each symlink in D points to its target (not only its name is there)",
       "fstests generic/348 (a symlink made, its directory fsynced: it holds its target), generic/690 (a symlink "
       "renamed, its directory fsynced: under its new name, with its target); generic tests, run on ext4, XFS, "
       "btrfs and f2fs",
       "tested"},
      {kFsyncFileLinks,
       "after fsync(F) returns, F's link count is durable, and each of its names is there (in a directory whose own "
       "name is durable; not a name a rename not yet durable gave it)",
       "fstests generic/520 (a file made and linked, fsynced by either name: the first name there with both links, "
       "fsck clean), generic/104 (links made to two files, one fsynced: its link count); generic tests, run on "
       "ext4, XFS, btrfs and f2fs; fsync(2) does not promise names",
       "tested"},
      {kFsyncFileUnlinked,
       "after fsync(F) returns, each durable name of F removed by unlink is gone (not made again since)",
       "fstests generic/106 (a link removed, the file fsynced by its other name in the same directory: the name is "
       "gone), generic/107 (a link removed in another directory than the fsynced name: gone); generic tests, run "
       "on ext4, XFS, btrfs and f2fs",
       "tested"},
      {kFsyncFileRenamed,
       "after fsync(F) returns by the new name a rename within one directory gave it, the durable name it had "
       "before is gone (not made again since)",
       "fstests generic/534 (a file renamed to a new name in its directory, fsynced by that name: the old name is "
       "gone); a generic test, run on ext4, XFS, btrfs and f2fs",
       "tested"},
  };
  return table;
}

const Rule& rule(const std::string& id) {
  for (const Rule& r : rules())
    if (id == r.id) return r;
  for (const Rule& r : fstests_rules())
    if (id == r.id) return r;
  throw std::out_of_range("no rule '" + id + "'");
}

const std::vector<std::string>& all_names() {
  static const std::vector<std::string> names{"A",     "B",     "A/C",     "A/foo",   "A/bar",   "B/foo",
                                              "B/bar", "A/C/foo", "B/C", "A/D", "B/C/foo", "A/D/foo"};
  return names;
}

std::uint64_t Oracle::file_of(std::uint64_t ino) {
  const auto [it, made] = file_of_.try_emplace(ino, files_ + 1);
  if (made) ++files_;
  return it->second;
}

void Oracle::observe(const LiveTree& live) {
  for (const auto& [path, e] : live) {
    if (e.type != LiveEntry::Type::file || e.block_size == 0) continue;
    if (unit_ != e.block_size) {  // the first file seen (one filesystem: one block size)
      unit_ = e.block_size;
      versions_.clear();
      held_.clear();
    }
    const std::uint32_t zero = fact_zero_block_crc(unit_);
    const std::uint64_t file = file_of(e.ino);
    held_[path].insert(file);
    std::vector<std::set<std::uint32_t>>& v = versions_[file];
    if (v.size() < e.blocks.size()) v.resize(e.blocks.size());
    for (std::size_t i = 0; i < e.blocks.size(); ++i)
      if (e.blocks[i] != zero) v[i].insert(e.blocks[i]);
  }
}

void Oracle::track_nostale(const std::vector<RuledFact>& facts) {
  for (const RuledFact& r : facts) {
    const Fact& f = r.fact;
    if (f.kind == FactKind::rewrite || f.kind == FactKind::remove || f.kind == FactKind::absent) nostale_.erase(f.path);
    if (f.kind == FactKind::rename) {
      nostale_.erase(f.path);
      nostale_.erase(f.second);
    }
    if (f.kind == FactKind::nostale && f.blocks.empty()) nostale_.erase(f.path);
    if (f.kind == FactKind::nostale && !f.blocks.empty()) nostale_[f.path] = f.blocks;
  }
}

std::vector<RuledFact> Oracle::before(const Op& op, const LiveTree& live) {
  observe(live);
  std::vector<RuledFact> out = before_op(op, live);
  // What the operation touches ends each nostale fact of its names, of
  // every other name of their files, and of the names under a directory
  // it renames: their blocks or their files change, and written() says
  // them again.
  std::set<std::uint64_t> files;
  for (const std::string& path : {op.path, op.second})
    if (const auto it = live.find(path); it != live.end()) files.insert(it->second.ino);
  // What keeps every file's bytes and every name's file changes nothing a
  // nostale fact says: no mark for it.
  const bool keeps = op.kind == OpKind::chmod || op.kind == OpKind::setxattr || op.kind == OpKind::removexattr ||
                     op.kind == OpKind::link || op.kind == OpKind::nothing;
  const auto touched = [&](const std::string& name) {
    if (keeps) return op.kind == OpKind::link && name == op.second;  // a new name: none said of it
    if (name == op.path || name == op.second) return true;
    if (op.kind == OpKind::rename_dir && (under(name, op.path) || under(name, op.second))) return true;
    const auto it = live.find(name);
    return it != live.end() && files.count(it->second.ino) != 0;
  };
  track_nostale(out);
  for (auto it = nostale_.begin(); it != nostale_.end();)
    if (touched(it->first)) {
      Fact f = fact(FactKind::nostale, it->first);
      f.size = unit_;
      out.push_back({f, ""});
      it = nostale_.erase(it);
    } else {
      ++it;
    }
  return out;
}

std::vector<RuledFact> Oracle::written(const Step& step, const LiveTree& live) {
  if (step.op.kind == OpKind::creat)  // a new file, whatever inode number it has
    if (const auto it = live.find(step.op.path); it != live.end()) file_of_[it->second.ino] = ++files_;
  observe(live);
  std::vector<RuledFact> out;
  if (!options_.stale_data_rule) return out;
  for (const auto& [path, e] : live) {
    if (e.type != LiveEntry::Type::file) continue;
    // The union over every file the name held: a crash may show any.
    std::vector<std::set<std::uint32_t>> blocks;
    for (const std::uint64_t file : held_[path]) {
      const std::vector<std::set<std::uint32_t>>& v = versions_[file];
      if (blocks.size() < v.size()) blocks.resize(v.size());
      for (std::size_t i = 0; i < v.size(); ++i) blocks[i].insert(v[i].begin(), v[i].end());
    }
    Fact f = fact(FactKind::nostale, path);
    f.size = unit_;
    for (const std::set<std::uint32_t>& b : blocks) f.blocks.emplace_back(b.begin(), b.end());
    // A mark's label holds 1024 bytes: the blocks past what fits are not
    // judged (a fact that says less is still true).
    while (!f.blocks.empty() && format_fact(f).size() > kMaxLabel) f.blocks.pop_back();
    if (f.blocks.empty()) continue;  // an empty file: nothing to judge yet
    const auto in_force = nostale_.find(path);
    if (in_force != nostale_.end() && in_force->second == f.blocks) continue;
    out.push_back({f, kNoStale});
  }
  track_nostale(out);
  return out;
}

// A name made again, or moved with its directory, is no longer one
// fsync-file-unlinked may say is gone.
void Oracle::names_made_by(const Op& op) {
  switch (op.kind) {
    case OpKind::creat:
    case OpKind::mkdir:
    case OpKind::symlink:
      name_made(op.path);
      break;
    case OpKind::link:
    case OpKind::rename_new:
    case OpKind::rename_over:
      name_made(op.second);
      break;
    case OpKind::rename_dir:
      name_made(op.path);
      name_made(op.second);
      break;
    default:
      break;
  }
}

void Oracle::add_fact(std::vector<RuledFact>& out, FactKind kind, const std::string& path, const std::string& second) {
  out.push_back({fact(kind, path, second), ""});
  if (kind == FactKind::remove) forget_rename(path);  // nothing is said of it any more
}

bool Oracle::said(const std::string& path) const { return durable_.count(path) != 0 || renamed_to_.count(path) != 0; }

void Oracle::content_changes(const Op& op, const LiveTree& live, std::vector<RuledFact>& out) {
  const auto it = live.find(op.path);
  if (it == live.end()) return;
  for (const auto& [path, e] : live)
    if (e.ino == it->second.ino && said(path)) add_fact(out, FactKind::rewrite, path);
  if (!appends(op.kind)) rewritten_.insert(it->second.ino);
}

void Oracle::moved(const Op& op, std::vector<RuledFact>& out) {
  // The durable name a rename to a new name in the same directory moves
  // the file from (its first, if renamed again before it settled).
  const auto from = renamed_from_.find(op.path);
  std::string origin = from != renamed_from_.end() ? from->second : durable_.count(op.path) != 0 ? op.path : "";
  if (from != renamed_from_.end()) renamed_from_.erase(from);
  if (op.kind == OpKind::rename_new && !origin.empty() && parent_of(origin) == parent_of(op.second))
    renamed_from_[op.second] = origin;
  if (op.kind == OpKind::rename_over) replaced_.insert(op.second);
  if (durable_.count(op.path) != 0) {
    out.push_back({fact(FactKind::rename, op.path, op.second), kRenameKeeps});
    renamed_to_.erase(op.path);
    renamed_to_.insert(op.second);
    // Renamed again before it settled: still one object, under one of its names.
    const auto group = rename_group_.find(op.path);
    const std::size_t id = group != rename_group_.end() ? group->second : ++groups_;
    rename_group_[op.path] = id;
    rename_group_[op.second] = id;
  } else {
    add_fact(out, FactKind::remove, op.path);
    add_fact(out, FactKind::remove, op.second);
  }
  durable_.erase(op.path);
}

std::vector<RuledFact> Oracle::before_op(const Op& op, const LiveTree& live) {
  std::vector<RuledFact> out;
  same_file_rename_ = false;
  names_made_by(op);
  const auto add = [&](FactKind kind, const std::string& path, const std::string& second = "") {
    add_fact(out, kind, path, second);
  };
  if (changes_content(op.kind)) {
    // Every name of the file that carries facts about it: its content
    // changes under each, and it stays there. A durable name, and a name a
    // pending rename moved it to (rename-keeps' expectation, which a
    // rewrite ends: the crash lab's oracle keeps that the file is under one
    // of the rename's names).
    content_changes(op, live, out);
    return out;
  }
  // The names of the file at `path` but `except` that carry facts: their
  // inode's links or attributes change, so what was said of them ends.
  const auto inode_changes = [&](const std::string& path, const std::string& except) {
    const auto it = live.find(path);
    if (it == live.end()) return;
    for (const auto& [name, e] : live)
      if (e.ino == it->second.ino && name != except && said(name)) add(FactKind::rewrite, name);
  };
  switch (op.kind) {
    case OpKind::creat:
    case OpKind::mkdir:
    case OpKind::symlink:
      add(FactKind::remove, op.path);  // no longer absent
      break;
    case OpKind::link:
      add(FactKind::remove, op.second);
      inode_changes(op.path, "");
      break;
    case OpKind::setxattr:
    case OpKind::removexattr:
    case OpKind::chmod:
      inode_changes(op.path, "");
      break;
    case OpKind::unlink:
    case OpKind::rmdir:
      if (const auto it = live.find(op.path);
          op.kind == OpKind::unlink && it != live.end() && it->second.type == LiveEntry::Type::file &&
          durable_.count(op.path) != 0)
        unlinked_[file_of(it->second.ino)].insert(op.path);
      add(FactKind::remove, op.path);
      inode_changes(op.path, op.path);
      durable_.erase(op.path);
      break;
    case OpKind::rename_new:
    case OpKind::rename_over: {
      const auto from = live.find(op.path), to = live.find(op.second);
      same_file_rename_ = from != live.end() && to != live.end() && from->second.ino == to->second.ino;
      if (same_file_rename_) break;  // vfs_rename: source and target one inode, nothing done
      inode_changes(op.second, op.second);  // what it replaces loses a link
      moved(op, out);
      durable_.erase(op.second);
      break;
    }
    case OpKind::rename_dir:
      for (const auto& [path, e] : live)
        if (under(path, op.path)) {
          add(FactKind::remove, path);
          durable_.erase(path);
        }
      for (const std::string& name : all_names())
        if (under(name, op.second) || name == op.second) add(FactKind::remove, name);
      moved(op, out);
      break;
    default:
      break;
  }
  return out;
}

// The pending renames as crashlab/facts/fact_checker.cpp holds them: a
// remove of one of a rename's names drops the whole rename (forget_rename:
// nothing is said of any of its names any more); an entry fact on one of
// them settles it there (settle_rename: the other names are no longer
// tied to it); an absent fact takes that name out of it (leave_rename).
void Oracle::forget_rename(const std::string& path) {
  renamed_to_.erase(path);
  replaced_.erase(path);
  std::erase_if(renamed_from_, [&](const auto& r) { return r.first == path || r.second == path; });
  const auto it = rename_group_.find(path);
  if (it == rename_group_.end()) return;
  const std::size_t group = it->second;
  for (auto g = rename_group_.begin(); g != rename_group_.end();)
    if (g->second == group) {
      renamed_to_.erase(g->first);
      renamed_from_.erase(g->first);
      replaced_.erase(g->first);
      g = rename_group_.erase(g);
    } else {
      ++g;
    }
}

void Oracle::settle_rename(const std::string& path) {
  const auto it = rename_group_.find(path);
  if (it == rename_group_.end()) return;
  const std::size_t group = it->second;
  std::erase_if(rename_group_, [&](const auto& g) { return g.second == group; });
}

void Oracle::leave_rename(const std::string& path) { rename_group_.erase(path); }

void Oracle::name_made(const std::string& path) {
  const auto at = [&](const std::string& n) { return n == path || under(n, path); };
  for (auto& [file, names] : unlinked_) std::erase_if(names, at);
  std::erase_if(renamed_from_, [&](const auto& r) { return at(r.first) || at(r.second); });
  std::erase_if(replaced_, at);
}

void Oracle::dir_synced(const std::string& dir, const LiveTree& live, const char* rule_id, std::vector<RuledFact>& out) {
  if (dir != "." && durable_.count(dir) == 0) return;  // its own name may not be there: nothing is promised
  for (const auto& [path, e] : live)
    if (parent_of(path) == dir) {
      out.push_back({fact(FactKind::entry, dir, name_in(path)), rule_id});
      durable_.insert(path);
      tested_names_.erase(path);
      renamed_from_.erase(path);  // its directory's entries say the old name's absence
      replaced_.erase(path);
      settle_rename(path);
      // --promises tested: a symlink's target with its name (sync says it
      // of every symlink already).
      if (options_.tested && rule_id == std::string(kFsyncDir) && e.type == LiveEntry::Type::symlink)
        out.push_back({fact(FactKind::symlink, path, e.target), kFsyncDirSymlink});
    }
  for (const std::string& name : all_names())
    if (parent_of(name) == dir && live.count(name) == 0) {
      out.push_back({fact(FactKind::absent, name), rule_id});
      leave_rename(name);
    }
}

std::vector<RuledFact> Oracle::after(const Step& step, const LiveTree& live) {
  observe(live);
  std::vector<RuledFact> out = promised(step, live);
  for (const Expect& e : step.expect) expected(e, live, out);
  track_nostale(out);
  return out;
}

void Oracle::expected(const Expect& e, const LiveTree& live, std::vector<RuledFact>& out) {
  const auto it = live.find(e.path);
  if (e.kind == FactKind::absent) {
    if (it != live.end()) throw std::invalid_argument(e.rule + " expects " + e.path + " absent; it is there");
    out.push_back({fact(FactKind::absent, e.path), e.rule});
    durable_.erase(e.path);
    leave_rename(e.path);
    return;
  }
  if (it == live.end()) throw std::invalid_argument(e.rule + " expects " + e.path + "; it is not there");
  const LiveEntry& x = it->second;
  durable_.insert(e.path);  // what is said of it ends as a durable name's does
  tested_names_.erase(e.path);
  Fact f;
  switch (e.kind) {
    case FactKind::entry:
      f = fact(FactKind::entry, parent_of(e.path), name_in(e.path));
      settle_rename(e.path);
      break;
    case FactKind::file:
      if (x.type != LiveEntry::Type::file) throw std::invalid_argument(e.rule + " expects " + e.path + " a file");
      f = fact(FactKind::file, e.path);
      f.size = x.size;
      f.crc32c = x.crc;
      settle_rename(e.path);  // the checker settles a pending rename on a file fact too
      break;
    case FactKind::mode:
      f = fact(FactKind::mode, e.path, type_name(x.type));
      f.size = x.mode;
      break;
    case FactKind::nlink:
      f = fact(FactKind::nlink, e.path);
      f.size = x.nlink;
      break;
    case FactKind::symlink:
      if (x.type != LiveEntry::Type::symlink) throw std::invalid_argument(e.rule + " expects " + e.path + " a symlink");
      f = fact(FactKind::symlink, e.path, x.target);
      break;
    case FactKind::xattr:
      f = fact(x.has_xattr ? FactKind::xattr : FactKind::noxattr, e.path, "user.nvj");
      f.size = x.xattr_size;
      f.crc32c = x.xattr_crc;
      break;
    default:
      throw std::invalid_argument(e.rule + " expects a " + to_string(e.kind) + " fact, which a test cannot");
  }
  out.push_back({f, e.rule});
}

std::vector<RuledFact> Oracle::promised(const Step& step, const LiveTree& live) {
  std::vector<RuledFact> out;
  switch (step.persist) {
    case Persist::none:
      return out;
    case Persist::sync:
      promised_by_sync(live, out);
      return out;
    case Persist::fsync:
    case Persist::fdatasync:
      break;
  }
  const std::string& target = step.persist_path;
  const auto it = live.find(target);
  if (target == "." || (it != live.end() && it->second.type == LiveEntry::Type::dir)) {
    dir_synced(target, live, kFsyncDir, out);
    // Replace by rename: the name made durable holds the new data.
    const Op& op = step.op;
    if (options_.auto_da_alloc && op.kind == OpKind::rename_over && !same_file_rename_ &&
        parent_of(op.second) == target && durable_.count(op.second) != 0) {
      const auto renamed = live.find(op.second);
      if (renamed != live.end() && renamed->second.type == LiveEntry::Type::file &&
          rewritten_.count(renamed->second.ino) == 0)
        add_content(out, op.second, renamed->second, kAutoDaAlloc);
    }
    return out;
  }
  if (it == live.end() || it->second.type != LiveEntry::Type::file) return out;
  promised_by_file_fsync(step, it->second.ino, live, out);
  return out;
}

void Oracle::promised_by_sync(const LiveTree& live, std::vector<RuledFact>& out) {
  for (const auto& [path, e] : live) durable_.insert(path);
  tested_names_.clear();
  unlinked_.clear();  // every name gone is said so below
  renamed_from_.clear();
  replaced_.clear();
  dir_synced(".", live, kSync, out);
  for (const auto& [path, e] : live)
    if (e.type == LiveEntry::Type::dir) dir_synced(path, live, kSync, out);
  for (const auto& [path, e] : live) {
    if (e.type == LiveEntry::Type::file) add_content(out, path, e, kSync);
    add_inode_facts(out, path, e, true, kSync);
  }
  rewritten_.clear();
}

void Oracle::promised_by_file_fsync(const Step& step, std::uint64_t ino, const LiveTree& live,
                                    std::vector<RuledFact>& out) {
  const std::string& target = step.persist_path;
  const bool tested = options_.tested && step.persist == Persist::fsync;
  if (tested) names_made_durable(target, ino, live, out);
  // Its link count is known unless a pending rename may show it under two names.
  bool links_known = tested;
  for (const auto& [path, e] : live)
    if (e.ino == ino && renamed_to_.count(path) != 0) links_known = false;
  // The file's data, under every name of it whose entry is durable.
  const char* rule_id = step.persist == Persist::fsync ? kFsyncFile : kFdatasyncFile;
  for (const auto& [path, e] : live)
    if (e.ino == ino && durable_.count(path) != 0) {
      // Under a name only a rule of the level tested made durable, that rule's.
      const auto by = tested_names_.find(path);
      const char* said_by = by != tested_names_.end() ? by->second : rule_id;
      add_content(out, path, e, said_by);
      if (step.persist == Persist::fsync) add_inode_facts(out, path, e, false, said_by);
      if (!tested) continue;
      out.push_back({xattr_fact(path, e), kFsyncFileXattr});  // user.nvj, set or not
      if (!links_known) continue;
      out.push_back({nlink_fact(path, e), kFsyncFileLinks});
    }
  if (tested) names_gone(target, ino, live, out);
  rewritten_.erase(ino);
}

void Oracle::names_made_durable(const std::string& target, std::uint64_t ino, const LiveTree& live,
                                std::vector<RuledFact>& out) {
  const auto name_durable = [&](const std::string& path, const char* rule_id) {
    const std::string dir = parent_of(path);
    if (durable_.count(path) != 0 || (dir != "." && durable_.count(dir) == 0)) return;
    if (rule_id == kFsyncFileLinks && renamed_to_.count(path) != 0) return;
    out.push_back({fact(FactKind::entry, dir, name_in(path)), rule_id});
    durable_.insert(path);
    tested_names_[path] = rule_id;
    settle_rename(path);
  };
  if (replaced_.count(target) == 0) name_durable(target, kFsyncFileName);
  for (const auto& [path, e] : live)
    if (e.ino == ino) name_durable(path, kFsyncFileLinks);
}

void Oracle::names_gone(const std::string& target, std::uint64_t ino, const LiveTree& live,
                        std::vector<RuledFact>& out) {
  // The durable name a rename in its directory moved it from, gone.
  if (const auto from = renamed_from_.find(target); from != renamed_from_.end()) {
    if (durable_.count(target) != 0 && live.count(from->second) == 0) {
      out.push_back({fact(FactKind::absent, from->second), kFsyncFileRenamed});
      leave_rename(from->second);
    }
    renamed_from_.erase(from);
  }
  // The durable names unlinked from it, gone.
  const auto gone = unlinked_.find(file_of(ino));
  if (gone != unlinked_.end()) {
    for (const std::string& path : gone->second)
      if (live.count(path) == 0) {
        out.push_back({fact(FactKind::absent, path), kFsyncFileUnlinked});
        leave_rename(path);
      }
    unlinked_.erase(gone);
  }
}

}  // namespace crashlab::explore
