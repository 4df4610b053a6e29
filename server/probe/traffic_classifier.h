// SPDX-License-Identifier: BSD-3-Clause
// TrafficClassifier: what each write to the data disk is, given what the
// journal said (docs/design.md, "The journal tracer"):
//   journal     the internal journal's region;
//   checkpoint  a block logged by a committed transaction, written home;
//   ordered     a block that a transaction allocated (its logged block
//               bitmap shows the bit newly set against the copy at home),
//               written before that transaction committed;
//   other       everything else: overwrites in place, writeback long after,
//               the superblock the kernel writes outside the journal.
// A write that is not a checkpoint waits for the next two commits to show
// whether one of them allocated it; until then it counts as other. Bytes and
// device time (the model's service time) are split by block.
//
// Bounded: at most kMaxHome logged blocks awaiting checkpoint, kMaxPending
// writes awaiting a commit, kMaxAllocations allocated runs per transaction;
// past those the oldest are classed at once.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <span>
#include <unordered_map>
#include <vector>

#include "common/clock.h"
#include "server/probe/ext4_layout.h"
#include "server/store/store.h"

namespace nvj {

enum class Traffic : std::uint8_t { journal, checkpoint, ordered, other };
inline constexpr std::array<const char*, 4> kTrafficNames = {"journal", "checkpoint", "ordered", "other"};

struct TrafficTotals {
  std::array<std::uint64_t, 4> bytes{};
  std::array<std::uint64_t, 4> writes{};  // requests with at least one block of the class
  std::array<Nanos, 4> device_time{};
};

class TrafficClassifier {
 public:
  static constexpr std::size_t kMaxHome = std::size_t{1} << 22;
  static constexpr std::size_t kMaxPending = std::size_t{1} << 16;
  static constexpr std::size_t kMaxAllocations = std::size_t{1} << 16;

  // `layout` and `data` may be null (no ext4 known): nothing is ordered then.
  TrafficClassifier(const Ext4Layout* layout, Store* data, std::uint32_t block_size);

  // From the journal decoder, in log order.
  void logged(std::uint64_t target, std::span<const std::uint8_t> home_content);
  void committed(std::uint32_t tid);
  // The superblock's tail moved: transactions before `sequence` are home.
  void tail_moved(std::uint32_t sequence);

  // From the data disk.
  void journal_write(std::uint64_t length, Nanos device_time);
  void data_write(std::uint64_t offset, std::uint64_t length, Nanos device_time);

  TrafficTotals totals() const;
  void reset();

 private:
  struct Pending {
    std::uint64_t first_block, blocks;
    std::uint64_t bytes;
    Nanos device_time;
    int commits_seen;
  };
  void add(Traffic t, std::uint64_t bytes, Nanos device_time);
  void note_allocations(std::uint32_t group, std::span<const std::uint8_t> bitmap);
  bool allocated(const Pending& p) const;

  const Ext4Layout* layout_;
  Store* data_;
  std::uint32_t block_size_;
  TrafficTotals totals_;
  std::unordered_map<std::uint64_t, std::uint32_t> home_;  // logged, not yet home -> its tid
  std::vector<std::uint64_t> open_targets_;
  std::deque<Pending> pending_;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> allocations_;  // blocks [start, end) of the open transaction
  std::vector<std::pair<std::uint64_t, std::uint64_t>> previous_allocations_;
  std::vector<std::uint8_t> home_bitmap_;
};

}  // namespace nvj
