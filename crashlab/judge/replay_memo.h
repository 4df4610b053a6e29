// SPDX-License-Identifier: BSD-3-Clause
// ReplayMemo: journal replays remembered by everything they read, for the
// fast path. The states of one crash point, and often of the points after
// it, hold the same journal (on an NVRAM export nothing of it is volatile),
// so the same replay: its scan, its checksums and its reads are done once.
// Only an external journal's replay is remembered: what it reads is the
// filesystem's superblock and the journal device, nothing else, and the key
// is the exact words identity() gives for those bytes (a CrashImage's,
// valid while that image lives), with the time the replay stamps; never a
// hash. On a hit the replay's writes are written again and its report
// returned; a replay that throws is not remembered. Past 256 MiB of
// remembered writes it starts again. Pure.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "crashlab/states/hash.h"
#include "fscore/ext4/journal_replay.h"

namespace crashlab {

class ReplayMemo {
 public:
  // replay_journal_like_e2fsck(fs, &journal, now, rules), or what it did
  // before on these very bytes by these rules.
  fscore::ext4::ReplayReport replay(fscore::ext4::ImageAccess fs, fscore::ext4::ImageAccess& journal, std::uint32_t now,
                                    const fscore::jbd2::RecoveryRules& rules);
  std::uint64_t hits() const { return hits_; }
  std::uint64_t misses() const { return misses_; }

 private:
  struct Write {
    bool journal = false;  // to the journal device, else the filesystem
    std::uint64_t offset = 0;
    std::vector<std::uint8_t> bytes;
  };
  struct Entry {
    fscore::ext4::ReplayReport report;
    std::vector<Write> writes;
  };
  std::unordered_map<std::vector<std::uint64_t>, Entry, WordsHash> entries_;
  std::uint64_t bytes_ = 0;
  std::uint64_t hits_ = 0, misses_ = 0;
};

}  // namespace crashlab
