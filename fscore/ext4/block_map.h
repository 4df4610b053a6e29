// SPDX-License-Identifier: BSD-3-Clause
// Which blocks of a filesystem being built are in use, as a sorted set of
// ranges rather than a bitmap: a 16 TiB image has 2^32 blocks but only a few
// thousand runs of metadata, so this stays small; bitmaps are rendered one
// group at a time when they are written.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <stdexcept>
#include <vector>

namespace fscore::ext4 {

// Raised when the filesystem cannot hold what was asked for; the message
// says what did not fit (like ENOSPC).
class NoSpaceError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Raised for an internal journal size the filesystem cannot take.
class JournalSizeError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

struct BlockRun {
  std::uint64_t start = 0;
  std::uint64_t count = 0;
};

class BlockMap {
 public:
  // Blocks [first, end) can be handed out.
  BlockMap(std::uint64_t first, std::uint64_t end);

  // Marks a run used; it must be free (a logic error otherwise).
  void mark(std::uint64_t start, std::uint64_t count);
  bool is_free(std::uint64_t start, std::uint64_t count) const;

  // The first free run of exactly `count` blocks at or after `goal`,
  // wrapping to the start once; nullopt if there is none. Marks it used.
  std::optional<std::uint64_t> allocate_contiguous(std::uint64_t count, std::uint64_t goal);
  // `count` blocks in as few runs as the free space allows, taken in order
  // from `goal` on (then wrapping). Throws NoSpaceError when there are not
  // that many free blocks.
  std::vector<BlockRun> allocate(std::uint64_t count, std::uint64_t goal);

  std::uint64_t used_in(std::uint64_t start, std::uint64_t end) const;
  std::uint64_t free_blocks() const { return (end_ - first_) - used_total_; }
  // Sets the bits of used blocks in [start, start + bits) of `bitmap`
  // (bit i is block start + i), which must be zeroed by the caller.
  void render(std::uint64_t start, std::uint64_t bits, std::span<std::uint8_t> bitmap) const;
  std::size_t runs() const { return used_.size(); }
  // The free runs of [first, end), in order.
  std::vector<BlockRun> free_runs() const;

 private:
  // The free gap that starts at or after `pos`: [gap_start, gap_end).
  std::pair<std::uint64_t, std::uint64_t> next_gap(std::uint64_t pos) const;

  std::uint64_t first_;
  std::uint64_t end_;
  std::uint64_t used_total_ = 0;
  std::map<std::uint64_t, std::uint64_t> used_;  // start -> end, disjoint and not touching
};

}  // namespace fscore::ext4
