// SPDX-License-Identifier: BSD-3-Clause
// The fast path's check of one crash state of an ext4 filesystem, in
// process, as a mount would leave it: the journal replayed into the state
// as e2fsck would replay it (fscore::ext4::replay_journal_like_e2fsck,
// writing into the state, never into the recording) where the kernel
// replays it (the superblock says needs_recovery: without it the kernel
// wipes the journal unread, marking it empty, and so does the fast path),
// the orphan list taken as the mount takes it (fscore/ext4/orphans.h;
// left unread where errors are recorded, as ext4_orphan_cleanup leaves
// it), then every fact the oracle holds read back with
// fscore::ext4::TreeReader (every metadata block's
// checksum checked as the kernel checks it: inodes, directory and htree
// blocks, extent tree blocks). A state no mount takes (a broken superblock,
// a journal that cannot be replayed, a corrupt commit the kernel's rules
// refuse) needs fsck; a filesystem that mounts but does not read back (an
// orphan list the kernel refuses, a checksum that fails) is unreadable.
// Both are verdicts, not exceptions, and neither reads the facts: a state
// the mount refuses breaks no promise of the workload's, it breaks the
// filesystem's. The whole structure is e2fsck's to judge
// (tools/nvj/crash/structure_fsck.h), on the state as this leaves it.
// Pure.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "crashlab/facts/fact_checker.h"
#include "crashlab/judge/replay_memo.h"
#include "fscore/block_io.h"
#include "fscore/jbd2/journal_recovery.h"

namespace crashlab {

enum class Verdict : std::uint8_t {
  pass,        // every fact holds
  fail,        // a fact is broken
  unreadable,  // it mounts, but does not read back (or the checker finds damage)
  needs_fsck,  // no mount takes it (the kernel refuses: a corrupt journal, a broken superblock)
};
const char* to_string(Verdict verdict);
// The verdict to_string names `name`, or nullopt.
std::optional<Verdict> verdict_named(std::string_view name);

struct StateVerdict {
  Verdict verdict = Verdict::pass;
  std::vector<FactViolation> violations;  // fail
  std::string error;                      // unreadable, needs_fsck: what is wrong
  bool replayed = false;                  // the journal had something to replay
  bool journal_wiped = false;             // a journal the kernel does not replay: needs_recovery is clear
  std::uint32_t replayed_blocks = 0;
  // The replay's, where the journal was replayed: what it wrote home,
  // from which log blocks, and into the superblocks.
  std::optional<fscore::ext4::ReplayReport> replay;
  std::size_t orphans = 0;                // inodes the mount deletes (the orphan list's, no links left)
  bool orphans_skipped = false;           // errors recorded (ERROR_FS, the journal's s_errno): the list is not read
};

// Why the fast path does not read the ext4 `source` holds (a feature it does
// not follow, as fast commits, named), or nullopt when it does: its states
// are then the kernel's to check, every one.
std::optional<std::string> fast_path_refuses(const fscore::BlockSource& source);

// What the fast path remembers from one state to the next of one
// CrashImage (the names it keys them by hold for that image only): files'
// CRCs by chunk, and external journals' replays by what they read.
struct FastPathMemo {
  ContentCache content;
  ReplayMemo replay;
};

// The filesystem is `fs`; `journal` its external journal's device, or
// nullptr. Both are written (the replay). `now` is the time the replay
// stamps in the superblock; `rules` those of the kernel whose mount the
// check stands for (fscore::jbd2::recovery_rules_of). `memo`, kept from
// state to state, spares replaying a journal that holds what it held
// before, and reading files whose blocks do.
StateVerdict check_ext4_state(fscore::BlockSource& fs_source, fscore::BlockSink& fs_sink, fscore::BlockSource* journal_source,
                              fscore::BlockSink* journal_sink, const FactChecker& facts, std::uint32_t now,
                              const fscore::jbd2::RecoveryRules& rules, FastPathMemo* memo = nullptr);

}  // namespace crashlab
