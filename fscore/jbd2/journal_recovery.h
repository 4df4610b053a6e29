// SPDX-License-Identifier: BSD-3-Clause
// Journal recovery as the kernel and e2fsck do it (recovery.c; ../shared
// facts in formats.md, "Recovery"): from s_start, expecting s_sequence, one
// pass finds where the log ends and what each transaction holds, a second
// gathers revoke records, a third writes every logged block home unless a
// revoke in the same or a later transaction covers it, restoring escaped
// magic numbers and skipping blocks whose checksum does not match.
//
// Pure: the journal is read through a JournalLog, blocks go home through a
// BlockSink. The journal is untrusted: every read is bounded, every loop ends
// within the journal's length.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "fscore/block_io.h"
#include "fscore/jbd2/journal_log.h"
#include "fscore/jbd2/journal_superblock.h"

namespace fscore::jbd2 {

// Error numbers recovery reports, as e2fsck's (Linux errno values).
inline constexpr int kErrIo = 5;           // EIO: a bad logged block, or passes disagree
inline constexpr int kErrBadCrc = 74;      // EFSBADCRC (EBADMSG)
inline constexpr int kErrCorrupted = 117;  // EFSCORRUPTED (EUCLEAN)

// Where the kernels the lab runs recover differently from e2fsprogs 1.47.
// A commit block whose checksum fails over the whole block but holds over
// its header followed by zeros is one whose first sector landed and whose
// rest did not: Linux 6.11 and later take it as complete ("Find incomplete
// commit block"; Debian's 6.12 has it, its 6.1 does not); e2fsck 1.47 and
// older kernels take it as corrupt, which ends the log and fails the mount.
struct RecoveryRules {
  bool partial_commit_blocks = false;
};
// The rules of a Linux release ("6.12.118+deb13-amd64", "7.3-rc7"): 6.11
// and later take partial commit blocks. A release that does not start with
// MAJOR.MINOR gets e2fsprogs' rules.
RecoveryRules recovery_rules_of(const std::string& kernel_release);

struct ScannedTransaction {
  std::uint32_t tid = 0;
  std::uint32_t first_log_block = 0;
  std::optional<std::uint32_t> commit_log_block;  // none: the log ends inside it
  std::uint32_t descriptor_blocks = 0;
  std::uint32_t logged_blocks = 0;
  std::uint32_t revoke_blocks = 0;
  std::uint32_t revoked = 0;
  std::uint32_t bad_descriptor_checksums = 0;  // descriptor and revoke blocks
  std::uint32_t bad_block_checksums = 0;       // logged blocks against their tags
  bool bad_commit_checksum = false;
  bool partial_commit = false;  // a commit block only its header's checksum holds for, taken by the rules
  std::uint64_t commit_seconds = 0;
  std::uint32_t commit_nanoseconds = 0;
  bool replayed = false;  // recovery writes it home
};

struct JournalScan {
  bool needs_recovery = false;  // s_start != 0
  std::uint32_t start_tid = 0;
  std::uint32_t end_tid = 0;  // transactions [start_tid, end_tid) are replayed
  std::optional<std::uint32_t> failed_commit;
  int error = 0;  // 0, or what recovery would fail with before replaying anything
  std::string end_reason;
  std::uint32_t end_log_block = 0;  // where the log ends
  std::vector<ScannedTransaction> transactions;
};

struct ReplayResult {
  std::uint32_t replayed = 0;      // blocks written home
  std::uint32_t revokes = 0;       // revoke records read
  std::uint32_t revoke_hits = 0;   // logged blocks not written because revoked
  std::uint32_t bad_checksums = 0; // logged blocks not written because their checksum is wrong
  int error = 0;                   // 0, kErrIo, kErrBadCrc, kErrCorrupted, or 22 (EINVAL: a bad revoke count)
  std::uint32_t next_tid = 0;      // the journal restarts here: end_tid + 1
  std::vector<std::uint64_t> written;  // home blocks in the order written
  // For each of them, the log block it is a copy of, and whether its first
  // four bytes were escaped (put back to the jbd2 magic).
  std::vector<std::pair<std::uint32_t, bool>> sources;
};

// Sees every journal block recovery reads and every home block it writes,
// in order (what e2fsck's block cache sees: its s_kbytes_written depends on
// it).
class RecoveryTrace {
 public:
  virtual ~RecoveryTrace() = default;
  virtual void read(std::uint32_t log_block) = 0;
  virtual void wrote(std::uint64_t home_block) = 0;
};

// The first pass, by `rules`. Throws std::invalid_argument for journals
// recovery does not handle (fast commit).
JournalScan scan_journal(const JournalLog& log, const JournalSuperblock& sb, RecoveryTrace* trace = nullptr,
                         const RecoveryRules& rules = {});

// Passes two and three: writes home through `fs` (block N at N * block size),
// refusing blocks at or past `fs_blocks`.
ReplayResult replay_journal(const JournalLog& log, const JournalSuperblock& sb, const JournalScan& scan,
                            BlockSink& fs, std::uint64_t fs_blocks, RecoveryTrace* trace = nullptr);

}  // namespace fscore::jbd2
