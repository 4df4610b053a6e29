// SPDX-License-Identifier: BSD-3-Clause
// Offline journal replay exactly as `e2fsck -E journal_only -y` does it
// (e2fsprogs 1.47): recovery's three passes (fscore/jbd2/journal_recovery),
// then the same changes to the superblocks, so that the image comes out byte
// for byte as e2fsck would leave it:
//   - the journal superblock: s_start 0, s_sequence the first transaction
//     not replayed + 1 (kept when recovery failed), checksum;
//   - the primary ext4 superblock as replayed, with needs_recovery cleared,
//     s_wtime = now, s_state marked not clean (recovery failed) or with
//     errors (a corrupt commit), s_kbytes_written grown by what e2fsck's
//     8-block write-back cache would have written, checksum. Backups are
//     not written (e2fsck writes only the primary).
// A clean journal changes nothing.
//
// Not done: e2fsck's restarted pass also releases orphan inodes left in the
// replayed superblock (reported in `orphans`), and fixes a few hints and
// flags that fresh images never need.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "fscore/block_io.h"
#include "fscore/ext4/image_reader.h"
#include "fscore/jbd2/journal_log.h"
#include "fscore/jbd2/journal_recovery.h"

namespace fscore::ext4 {

// An image read and written in place.
struct ImageAccess {
  const BlockSource& source;
  BlockSink& sink;
};

// Where a filesystem's journal is: the filesystem (read_image) and, for an
// external journal, the journal device. Throws std::runtime_error when the
// filesystem has no journal, an external journal is missing or is another
// filesystem's, or anything does not read back.
struct LocatedJournal {
  ImageInfo fs;
  std::optional<ImageInfo> device;  // an external journal's device
  jbd2::JournalSuperblock super;
  std::uint64_t superblock_offset = 0;  // in bytes, on the filesystem or the device
  std::vector<jbd2::LogRun> runs;       // internal: the journal inode's blocks; external: none
};
LocatedJournal locate_journal(const BlockSource& fs, const BlockSource* journal_device);

struct ReplayReport {
  bool needed = false;  // needs_recovery or s_start != 0
  jbd2::JournalScan scan;
  jbd2::ReplayResult result;
  std::uint32_t new_sequence = 0;
  std::uint64_t kbytes_added = 0;  // to s_kbytes_written
  std::uint32_t orphans = 0;       // s_last_orphan after replay (0: none); e2fsck would release it
  // An ext3-style journal (indirect blocks): e2fsck's reads of them are not
  // counted, so s_kbytes_written may differ from its.
  bool block_mapped_journal = false;
};

// `journal` is the journal device for an external journal, else nullptr.
// `now` is what e2fsck takes from E2FSCK_TIME or the clock. `rules` are
// e2fsck's by default; the fast path passes those of the kernel whose mount
// it stands for (the blocks written home are the same, the superblocks
// e2fsck's).
ReplayReport replay_journal_like_e2fsck(ImageAccess fs, ImageAccess* journal, std::uint32_t now,
                                        const jbd2::RecoveryRules& rules = {});

// What a kernel's mount does to a journal it does not replay (needs_recovery
// clear, the log not empty): jbd2_journal_wipe marks it empty, s_start 0 and
// its sequence kept (the checksum made again), nothing else read or written.
// Returns whether it wrote (s_start was not 0). Throws what locate_journal
// throws.
bool wipe_journal_like_the_kernel(ImageAccess fs, ImageAccess* journal);

}  // namespace fscore::ext4
