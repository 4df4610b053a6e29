// SPDX-License-Identifier: BSD-3-Clause
// What the blocks a recorded change wrote are, as far as the lab can tell,
// for a person reading what the devices saw (nvj crash frames):
//
//   ext4     by where they are, from the filesystem as it is at a given
//            frame (fscore/ext4/block_owners.h): the superblock, a group's
//            bitmaps, the inode table with the inodes in it and their
//            paths, a directory's or a file's blocks (which file, which of
//            its blocks), extent tree and attribute blocks;
//   jbd2     by what they hold, on the external journal's export or in the
//            internal journal's blocks: the superblock (its start and
//            sequence), descriptor blocks (the transaction, the home
//            blocks they log), the logged copies (of which home block, and
//            that block's own meaning), revoke and commit blocks;
//   XFS      by their magic numbers: the superblock and AG headers, B+tree,
//            inode, directory, attribute and symlink blocks, and its log's
//            record headers;
//   btrfs    not read: the export and the range only.
//
// A logged copy is matched to the descriptor that tags its log block
// nearest in the recording (a log wraps: an older descriptor may have
// tagged the same block). Pure.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "crashlab/index/recording_index.h"
#include "fscore/ext4/block_owners.h"
#include "fscore/fs_signature.h"
#include "fscore/jbd2/log_blocks.h"

namespace crashlab {

class BlockMeanings {
 public:
  // The filesystem read from the exports as they are right after frame
  // `end` (every change sent by then landed, whether durable or not), and
  // the descriptors of every journal write in the recording.
  BlockMeanings(const RecordingIndex& index, std::uint64_t end);

  // One line on what was read: "ext4, 1 KiB blocks, its journal on export
  // journal (jbd2, 4 KiB blocks, csum v3)"; "XFS, its log inside"; ...
  const std::string& summary() const { return summary_; }

  // What change `i` (a write, zero or trim) covers, in runs of blocks that
  // mean one thing, in order, each with the bytes of the export it covers.
  // A zero or trim is placed by where it is only.
  struct Meaning {
    std::uint64_t offset = 0, length = 0;
    std::string what;  // "file data of A/foo (inode 13), blocks 0-3"
  };
  std::vector<Meaning> of(std::size_t change) const;

  // What was read, for the lab's other readers: the export the filesystem
  // is on, its blocks' owners (ext4; nullptr where none were read), and
  // every filesystem block a journal descriptor of the recording tags
  // (sorted, each once).
  std::uint8_t data_export() const { return data_; }
  const fscore::ext4::BlockOwners* owners() const { return owners_.get(); }
  std::vector<std::uint64_t> logged_homes() const;

 private:
  struct Logged {
    std::uint64_t sequence;  // the descriptor's change's frame
    std::uint32_t tid;
    std::uint64_t target;
  };
  // The journal's log: where its blocks are, and what was logged in them.
  struct Journal {
    std::uint8_t device = 0;
    fscore::jbd2::LogFormat format;
    // Internal: the data export's blocks of the log, in log order (empty:
    // the whole export, log block L at byte L * block size).
    std::vector<std::pair<std::uint64_t, std::uint64_t>> runs;  // (first fs block, count)
    std::map<std::uint64_t, std::vector<Logged>> tagged;        // log block -> descriptors tagging it
  };

  // The log block at byte `offset` of `device`, if the journal is there.
  std::optional<std::uint64_t> log_block(std::uint8_t device, std::uint64_t offset) const;
  std::string home_block(std::uint64_t block) const;   // "block 36 (inode table of group 0, inodes 1-4)"
  std::string owner_label(const fscore::ext4::BlockOwner& o, std::uint64_t block) const;
  std::string owner_name(std::uint32_t ino) const;     // "A/foo (inode 13)"
  std::string journal_block(std::uint64_t log, std::span<const std::uint8_t> bytes, std::uint64_t sequence) const;
  std::string xfs_block(std::span<const std::uint8_t> bytes, bool log) const;
  void scan_descriptors(const RecordingIndex& index);

  const RecordingIndex& index_;
  fscore::FsKind kind_ = fscore::FsKind::unknown;
  std::uint8_t data_ = 0;
  std::optional<std::uint8_t> journal_export_;
  std::uint32_t block_size_ = 4096;  // the filesystem's
  std::unique_ptr<fscore::ext4::BlockOwners> owners_;
  std::optional<Journal> journal_;
  // XFS: its log inside the data export, in bytes [first, second).
  std::optional<std::pair<std::uint64_t, std::uint64_t>> xfs_log_;
  std::string summary_;
};

}  // namespace crashlab
