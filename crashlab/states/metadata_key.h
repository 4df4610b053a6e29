// SPDX-License-Identifier: BSD-3-Clause
// MetadataKeys: which crash states of an ext4 recording leave the same
// metadata once a mount has recovered them, told without reading a block:
// the words CrashImage::Export::identity gives for what the recovered
// metadata is made of. A checker of the structure (e2fsck, on a clean
// journal) reads the metadata and nothing else; a mount's recovery (the
// journal's replay or wipe, the orphan list) reads the metadata and the
// journal's log and writes metadata only. So a state's key, taken once its
// check has recovered it, is
//   - what the replay wrote (the verdict's replay): each block written
//     home, where, and which log block it is a copy of (the log block's
//     words: the replay never writes the log), and what it changed in the
//     superblocks;
//   - the metadata ranges of the filesystem's export as the state held
//     them before (state_identity), but the blocks the replay wrote and the
//     log's blocks (its superblock is in), and the head of an external
//     journal's device (its superblocks).
// The key is exact: equal words are equal bytes, never a hash. Two states
// holding the same bytes through different changes get different keys,
// which costs a check, never a verdict.
//
// The metadata ranges: every block that is neither a regular file's data
// nor free, in the filesystem as the recording starts and as it ends (its
// journal replayed), and every block a journal descriptor of the recording
// tags (metadata allocated and freed in between, a file's data under
// data=journal). What is left is a file's data or free space at both ends
// and never journaled: written by data writes only. An ext4 without a
// journal, or one whose blocks or journal do not read at either end: every
// export whole, before the check.
//
// One way this can merge what differs: a state whose metadata is corrupt
// so that it points into a file's data (a torn extent index) has e2fsck
// read that data block, which the key leaves out; two such states then
// share the verdict, and e2fsck would have to find a valid, checksummed
// metadata block in one of them for that to matter. Pure.
#pragma once

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "crashlab/states/crash_image.h"
#include "crashlab/index/recording_index.h"
#include "crashlab/judge/fast_path.h"

namespace crashlab {

class MetadataKeys {
 public:
  // Reads the filesystem at the recording's start and end (an ext4 on the
  // export named "data", or the first; its external journal on "journal").
  explicit MetadataKeys(const RecordingIndex& index);

  // The key of the state `image` holds, its check done (the fast path's
  // verdict `verdict`).
  std::vector<std::uint64_t> key(CrashImage& image, const StateVerdict& verdict) const;

  // The filesystem's export, and the byte ranges [start, end) of it the
  // key covers (sorted, apart), less what a replay writes.
  std::uint8_t data_export() const { return data_; }
  const std::vector<std::pair<std::uint64_t, std::uint64_t>>& ranges() const { return ranges_; }
  // Whether every export is taken whole (no journal, or nothing read).
  bool whole() const { return !journal_; }

 private:
  // Where the log is: log block L at byte log_offset(L) of export `device`.
  struct Log {
    std::uint8_t device = 0;
    std::uint32_t block_size = 0;
    std::uint64_t head = 0;  // an external journal's device: its bytes before this (superblocks)
    std::vector<std::pair<std::uint64_t, std::uint64_t>> runs;  // internal: (first block, count) in log order
  };
  std::optional<std::uint64_t> log_offset(std::uint32_t block) const;

  std::uint8_t data_ = 0;
  std::uint64_t block_size_ = 0;  // the filesystem's
  std::vector<std::pair<std::uint64_t, std::uint64_t>> ranges_;
  std::optional<Log> journal_;
};

}  // namespace crashlab
