// SPDX-License-Identifier: BSD-3-Clause
#include "fscore/ext4/block_map.h"

#include <algorithm>

namespace fscore::ext4 {

BlockMap::BlockMap(std::uint64_t first, std::uint64_t end) : first_(first), end_(end) {}

bool BlockMap::is_free(std::uint64_t start, std::uint64_t count) const {
  if (start < first_ || count > end_ - start) return false;
  return used_in(start, start + count) == 0;
}

void BlockMap::mark(std::uint64_t start, std::uint64_t count) {
  if (count == 0) return;
  if (!is_free(start, count)) throw std::logic_error("block map: run " + std::to_string(start) + "+" +
                                                     std::to_string(count) + " is not free");
  std::uint64_t end = start + count;
  auto next = used_.lower_bound(start);
  if (next != used_.end() && next->first == end) {  // touches the run after
    end = next->second;
    next = used_.erase(next);
  }
  if (next != used_.begin()) {
    auto prev = std::prev(next);
    if (prev->second == start) {  // touches the run before
      prev->second = end;
      used_total_ += count;
      return;
    }
  }
  used_.emplace_hint(next, start, end);
  used_total_ += count;
}

std::uint64_t BlockMap::used_in(std::uint64_t start, std::uint64_t end) const {
  std::uint64_t total = 0;
  auto it = used_.upper_bound(start);
  if (it != used_.begin()) --it;
  for (; it != used_.end() && it->first < end; ++it) {
    const std::uint64_t a = std::max(it->first, start);
    const std::uint64_t b = std::min(it->second, end);
    if (a < b) total += b - a;
  }
  return total;
}

std::pair<std::uint64_t, std::uint64_t> BlockMap::next_gap(std::uint64_t pos) const {
  pos = std::max(pos, first_);
  auto it = used_.upper_bound(pos);
  if (it != used_.begin()) {
    auto prev = std::prev(it);
    if (prev->second > pos) pos = prev->second;  // inside a used run: skip it
  }
  const std::uint64_t gap_end = it == used_.end() ? end_ : it->first;
  return {std::min(pos, end_), gap_end};
}

std::vector<BlockRun> BlockMap::free_runs() const {
  std::vector<BlockRun> out;
  for (std::uint64_t pos = first_; pos < end_;) {
    const auto [a, b] = next_gap(pos);
    if (a >= end_) break;
    if (b > a) out.push_back({a, b - a});
    pos = b;
  }
  return out;
}

std::optional<std::uint64_t> BlockMap::allocate_contiguous(std::uint64_t count, std::uint64_t goal) {
  for (int pass = 0; pass < 2; ++pass) {
    std::uint64_t pos = pass == 0 ? goal : first_;
    const std::uint64_t stop = pass == 0 ? end_ : std::min(goal + count, end_);
    while (pos < stop) {
      const auto [a, b] = next_gap(pos);
      if (a >= end_) break;
      if (b - a >= count) {
        mark(a, count);
        return a;
      }
      pos = b;
    }
  }
  return std::nullopt;
}

std::vector<BlockRun> BlockMap::allocate(std::uint64_t count, std::uint64_t goal) {
  if (count > free_blocks())
    throw NoSpaceError("needs " + std::to_string(count) + " more blocks, " + std::to_string(free_blocks()) +
                       " are free");
  std::vector<BlockRun> runs;
  std::uint64_t pos = goal;
  bool wrapped = false;
  while (count > 0) {
    auto [a, b] = next_gap(pos);
    if (a >= end_) {
      if (wrapped) throw std::logic_error("block map: free count and runs disagree");
      wrapped = true;
      pos = first_;
      continue;
    }
    const std::uint64_t n = std::min(count, b - a);
    mark(a, n);
    if (!runs.empty() && runs.back().start + runs.back().count == a) {
      runs.back().count += n;
    } else {
      runs.push_back({a, n});
    }
    count -= n;
    pos = a + n;
  }
  return runs;
}

void BlockMap::render(std::uint64_t start, std::uint64_t bits, std::span<std::uint8_t> bitmap) const {
  const std::uint64_t end = start + bits;
  auto it = used_.upper_bound(start);
  if (it != used_.begin()) --it;
  for (; it != used_.end() && it->first < end; ++it) {
    if (it->second <= start) continue;  // the run before ends before the range
    std::uint64_t a = std::max(it->first, start) - start;
    const std::uint64_t b = std::min(it->second, end) - start;
    for (; a < b && a % 8 != 0; ++a) bitmap[a / 8] |= static_cast<std::uint8_t>(1u << (a % 8));
    if (a + 8 <= b) {
      std::fill(bitmap.begin() + static_cast<std::ptrdiff_t>(a / 8), bitmap.begin() + static_cast<std::ptrdiff_t>(b / 8),
                std::uint8_t{0xFF});
      a = b / 8 * 8;
    }
    for (; a < b; ++a) bitmap[a / 8] |= static_cast<std::uint8_t>(1u << (a % 8));
  }
}

}  // namespace fscore::ext4
