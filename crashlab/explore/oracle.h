// SPDX-License-Identifier: BSD-3-Clause
// The explorer's oracle: what a generated workload may rely on after each
// step, derived from the persistence calls alone by a table of rules, each
// citing where the promise is written (docs/explore-rules.md lists them).
// It reads the live tree the workload sees (LiveTree: taken by the runner
// before and after each step) and answers with facts (crashlab/facts/fact.h)
// to post as marks: before an operation, the facts that void what it
// changes; after its persistence call, what that call made durable. Only
// promises: what a filesystem does in practice beyond them (an fsync of a
// new file making its name durable on ext4) is never a fact. Pure.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "crashlab/explore/workload.h"
#include "crashlab/facts/fact.h"

namespace crashlab::explore {

// What a name in the live tree is.
struct LiveEntry {
  enum class Type { file, dir, symlink } type = Type::file;
  std::uint64_t ino = 0;
  std::uint64_t size = 0;  // a file's
  std::uint32_t crc = 0;   // a file's content, fact_crc32c
  std::uint32_t mode = 0;  // permission bits
  std::uint64_t nlink = 0;
  std::string target;      // a symlink's
  // A file's attribute user.nvj (the only one the workloads set): its size
  // and CRC-32C, or none.
  bool has_xattr = false;
  std::uint64_t xattr_size = 0;
  std::uint32_t xattr_crc = 0;
  // A file's blocks of `block_size` bytes (the filesystem's): the
  // fact_block_crcs of its content, the last part block zero-padded.
  std::uint32_t block_size = 0;
  std::vector<std::uint32_t> blocks{};
};
// Every name under the root but the root ("A", "A/foo", ...), lost+found left out.
using LiveTree = std::map<std::string, LiveEntry>;

// A rule of the table: its id and its source.
struct Rule {
  const char* id;
  const char* promise;
  const char* source;
  // Its level: "posix" (written down by the standard or the filesystem's
  // documentation: --promises posix, the default), "tested" (what fstests'
  // power-fail tests hold the filesystems to, generalized: --promises
  // tested adds them), "fstests" (one test's own assertion, --bound fstests).
  const char* level = "posix";
};
const std::vector<Rule>& rules();
// A rule of the table, or of fstests' tests (fstests_rules()); std::out_of_range
// for an unknown id.
const Rule& rule(const std::string& id);

struct RuledFact {
  crashlab::Fact fact;
  std::string rule;  // its id; "" for a fact that only voids
};

struct OracleOptions {
  // ext4 in data=ordered or data=journal with auto_da_alloc (its default):
  // the replace-by-rename rule holds.
  bool auto_da_alloc = false;
  // No stale data: a file's blocks never show another file's old bytes
  // (everywhere but ext4's data=writeback, which says they may).
  bool stale_data_rule = true;
  // --promises tested: the rules of the level "tested" too.
  bool tested = false;
};

// Every name the file set can hold, the new names of renames and the names
// under them included: where an absent fact may be posted.
const std::vector<std::string>& all_names();

class Oracle {
 public:
  explicit Oracle(OracleOptions options) : options_(options) {}

  // Before `op` runs on `live`: the facts that end what it will change.
  std::vector<RuledFact> before(const Op& op, const LiveTree& live);
  // After `step`'s operation returned, before its persistence call, on
  // `live`: what no crash may show of the files' blocks (nostale facts,
  // each file's contents so far; before() ended those of the names the
  // operation touches).
  std::vector<RuledFact> written(const Step& step, const LiveTree& live);
  // After `step`'s operation and persistence call returned, on `live`:
  // what the rules promise, then what the step's test asserts
  // (Step::expect). std::invalid_argument when an expectation names what
  // `live` does not hold (a scenario written wrong).
  std::vector<RuledFact> after(const Step& step, const LiveTree& live);

 private:
  std::vector<RuledFact> promised(const Step& step, const LiveTree& live);
  // promised()'s cases: sync(), every name and what each holds; fsync or
  // fdatasync of the file `ino` by the name the step gives.
  void promised_by_sync(const LiveTree& live, std::vector<RuledFact>& out);
  void promised_by_file_fsync(const Step& step, std::uint64_t ino, const LiveTree& live, std::vector<RuledFact>& out);
  // --promises tested, after fsync of the file `ino` by `target`: the name it
  // was fsynced by (a pending rename's new name settles there), then its
  // other names (none a pending rename gave it), each where its directory's
  // own name is durable; then the durable names it had and has no more (a
  // rename's old name, unlinked ones), gone.
  void names_made_durable(const std::string& target, std::uint64_t ino, const LiveTree& live,
                          std::vector<RuledFact>& out);
  void names_gone(const std::string& target, std::uint64_t ino, const LiveTree& live, std::vector<RuledFact>& out);
  std::vector<RuledFact> before_op(const Op& op, const LiveTree& live);
  // before_op()'s parts: the names `op` makes again; a fact into `out` (a
  // remove ends what was said of a pending rename's names); whether facts
  // were said of a name (a durable one, or one a pending rename moved a
  // file to); a content change said under every such name of the file; a
  // rename: found under one of the names only if it had a durable one,
  // else nothing is said of either name any more.
  void names_made_by(const Op& op);
  void add_fact(std::vector<RuledFact>& out, FactKind kind, const std::string& path, const std::string& second = "");
  bool said(const std::string& path) const;
  void content_changes(const Op& op, const LiveTree& live, std::vector<RuledFact>& out);
  void moved(const Op& op, std::vector<RuledFact>& out);
  // The blocks' contents each file and each name has held, from `live`.
  void observe(const LiveTree& live);
  // The nostale facts in force as the checker holds them, after `facts`.
  void track_nostale(const std::vector<RuledFact>& facts);
  void expected(const Expect& e, const LiveTree& live, std::vector<RuledFact>& out);
  void forget_rename(const std::string& path);
  void settle_rename(const std::string& path);
  void leave_rename(const std::string& path);
  void dir_synced(const std::string& dir, const LiveTree& live, const char* rule, std::vector<RuledFact>& out);

  OracleOptions options_;
  std::set<std::string> durable_;  // names whose entry is durable, "." being durable always
  // Durable names only a rule of the level tested made so (fsync-file-name,
  // fsync-file-links), with that rule: what is said under them is its, not
  // fsync-file's.
  std::map<std::string, const char*> tested_names_;
  // Durable names unlinked from each file (by file, file_of()) and not made
  // again since, nor moved with a directory: what fsync-file-unlinked says
  // is gone once the file is fsynced.
  std::map<std::uint64_t, std::set<std::string>> unlinked_;
  // The durable name each pending rename within one directory moved a file
  // from, by the name it moved it to (renamed again before it settled: the
  // first one): what fsync-file-renamed says is gone once the file is
  // fsynced by the new name.
  std::map<std::string, std::string> renamed_from_;
  // Names a pending rename over an existing name replaced: fsync of the
  // file by such a name promises nothing of the name at the level tested
  // (generic/322 renames to a new name only).
  std::set<std::string> replaced_;
  void name_made(const std::string& path);
  // Names a posted rename moved a file to: facts said of the file go with
  // them until the rename settles.
  std::set<std::string> renamed_to_;
  // Every name of each pending rename (its first name and each it was
  // renamed to before it settled), by rename, as the checker holds them: a
  // fact that removes one of them ends what the checker holds of all
  // (remove), so the oracle says nothing more of any (forget_rename).
  std::map<std::string, std::size_t> rename_group_;
  std::size_t groups_ = 0;
  // Inodes whose content changed since it was last durable by writes other
  // than appends (or a truncation): the replace-by-rename rule leaves them out.
  std::set<std::uint64_t> rewritten_;
  // The operation before() saw is a rename of one link of a file over
  // another of the same file: rename(2) returns before the filesystem is
  // asked, so nothing changes and no rule of the rename applies.
  bool same_file_rename_ = false;
  // Each file by a number of its own (an inode number comes back for the
  // next file made after an unlink; its old bytes are exactly the stale
  // data the new file must not show), by inode: a creat gives a new one.
  std::map<std::uint64_t, std::uint64_t> file_of_;
  std::uint64_t files_ = 0;
  std::uint64_t file_of(std::uint64_t ino);
  // Every content each file's blocks held at a step's edge (CRC-32C, zero
  // blocks left out); every file each name held; and the nostale facts in
  // force, by name.
  std::map<std::uint64_t, std::vector<std::set<std::uint32_t>>> versions_;
  std::map<std::string, std::set<std::uint64_t>> held_;
  std::map<std::string, std::vector<std::vector<std::uint32_t>>> nostale_;
  std::uint32_t unit_ = 0;  // the filesystem's block, as the live tree gives it
};

}  // namespace crashlab::explore
