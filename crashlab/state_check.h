// SPDX-License-Identifier: BSD-3-Clause
// The fast path's check of one crash state of an ext4 filesystem, in
// process, as a mount would leave it: the journal replayed into the state
// as e2fsck would replay it (fscore::ext4::replay_journal_like_e2fsck,
// writing into the state, never into the recording) where the kernel
// replays it (the superblock says needs_recovery: without it the kernel
// wipes the journal unread, and so does the fast path), the orphan list taken
// as the mount takes it (fscore/ext4/orphans.h), then every fact the oracle
// holds read back with fscore::ext4::TreeReader (every metadata block's
// checksum checked as the kernel checks it: inodes, directory and htree
// blocks, extent tree blocks). A filesystem that does not read back (a
// broken superblock, a journal that cannot be replayed, an orphan list the
// kernel refuses, a checksum that fails) is a verdict too, not an
// exception. Pure.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "fscore/block_io.h"
#include "crashlab/fact_oracle.h"
#include "crashlab/replay_memo.h"

namespace crashlab {

enum class Verdict : std::uint8_t {
  pass,        // every fact holds
  fail,        // a fact is broken
  unreadable,  // the filesystem does not read back (or its journal does not replay)
};
const char* to_string(Verdict verdict);

struct StateVerdict {
  Verdict verdict = Verdict::pass;
  std::vector<FactViolation> violations;  // fail
  std::string error;                      // unreadable: what is wrong
  bool replayed = false;                  // the journal had something to replay
  bool journal_wiped = false;             // a journal the kernel does not replay: needs_recovery is clear
  std::uint32_t replayed_blocks = 0;
  std::size_t orphans = 0;                // inodes the mount deletes (the orphan list's, no links left)
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
// stamps in the superblock. `memo`, kept from state to state, spares
// replaying a journal that holds what it held before, and reading files
// whose blocks do.
StateVerdict check_ext4_state(fscore::BlockSource& fs_source, fscore::BlockSink& fs_sink, fscore::BlockSource* journal_source,
                              fscore::BlockSink* journal_sink, const FactOracle& oracle, std::uint32_t now,
                              FastPathMemo* memo = nullptr);

}  // namespace crashlab
