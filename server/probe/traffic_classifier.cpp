// SPDX-License-Identifier: BSD-3-Clause
#include "server/probe/traffic_classifier.h"

#include <algorithm>
#include <bit>

#include "fscore/endian.h"

namespace nvj {

TrafficClassifier::TrafficClassifier(const Ext4Layout* layout, Store* data, std::uint32_t block_size)
    : layout_(layout), data_(data), block_size_(block_size) {}

void TrafficClassifier::add(Traffic t, std::uint64_t bytes, Nanos device_time) {
  const auto i = static_cast<std::size_t>(t);
  totals_.bytes[i] += bytes;
  totals_.device_time[i] += device_time;
  ++totals_.writes[i];
}

void TrafficClassifier::logged(std::uint64_t target, std::span<const std::uint8_t> home_content) {
  if (open_targets_.size() < kMaxHome) open_targets_.push_back(target);
  if (layout_ == nullptr || data_ == nullptr) return;
  if (const auto group = layout_->bitmap_group(target)) note_allocations(*group, home_content);
}

void TrafficClassifier::note_allocations(std::uint32_t group, std::span<const std::uint8_t> bitmap) {
  // New bits against the copy at home: blocks allocated since that bitmap
  // was last checkpointed (by this transaction, most of the time).
  const std::uint64_t at = layout_->bitmap_block_offset(group);
  if (at + block_size_ > data_->size() || bitmap.size() < block_size_) return;
  home_bitmap_.resize(block_size_);
  data_->read(home_bitmap_.data(), block_size_, at);
  const std::uint64_t first = layout_->group_first_block(group);
  const std::uint32_t bits = std::min<std::uint32_t>(layout_->blocks_in_group(group), block_size_ * 8);
  // 64 bits at a time: most words of a bitmap have no new bit.
  const auto fresh_word = [&](std::uint32_t w) {
    // Bit i of byte j is block 8j + i: a little-endian load puts it at bit 8j + i.
    std::uint64_t fresh = fscore::load_le<std::uint64_t>(bitmap.data() + 8 * w) &
                          ~fscore::load_le<std::uint64_t>(home_bitmap_.data() + 8 * w);
    const std::uint32_t valid = bits - 64 * w;
    if (valid < 64) fresh &= (std::uint64_t{1} << valid) - 1;
    return fresh;
  };
  // The first bit at or after `from` that is (or, with set == false, is not) fresh; `bits` if none.
  const auto next = [&](std::uint32_t from, bool set) {
    for (std::uint32_t w = from / 64; 64 * w < bits; ++w) {
      std::uint64_t word = set ? fresh_word(w) : ~fresh_word(w);
      if (w == from / 64) word &= ~std::uint64_t{0} << (from % 64);
      if (word != 0) return std::min(bits, 64 * w + static_cast<std::uint32_t>(std::countr_zero(word)));
    }
    return bits;
  };
  for (std::uint32_t bit = next(0, true); bit < bits; bit = next(bit, true)) {
    const std::uint32_t end = next(bit, false);
    if (allocations_.size() < kMaxAllocations) allocations_.emplace_back(first + bit, first + end);
    bit = end;
  }
}

bool TrafficClassifier::allocated(const Pending& p) const {
  const std::uint64_t end = p.first_block + p.blocks;
  for (const auto* runs : {&allocations_, &previous_allocations_}) {
    auto it = std::upper_bound(runs->begin(), runs->end(), std::make_pair(p.first_block, ~std::uint64_t{0}));
    if (it != runs->begin() && std::prev(it)->second > p.first_block) return true;
    if (it != runs->end() && it->first < end) return true;
  }
  return false;
}

void TrafficClassifier::committed(std::uint32_t tid) {
  for (std::uint64_t t : open_targets_) {
    if (home_.size() >= kMaxHome) break;
    home_[t] = tid;
  }
  open_targets_.clear();
  std::sort(allocations_.begin(), allocations_.end());
  for (auto it = pending_.begin(); it != pending_.end();) {
    if (allocated(*it)) {
      add(Traffic::ordered, it->bytes, it->device_time);
      it = pending_.erase(it);
    } else if (++it->commits_seen >= 2) {
      add(Traffic::other, it->bytes, it->device_time);
      it = pending_.erase(it);
    } else {
      ++it;
    }
  }
  previous_allocations_ = std::move(allocations_);
  allocations_.clear();
}

void TrafficClassifier::tail_moved(std::uint32_t sequence) {
  for (auto it = home_.begin(); it != home_.end();)
    it = static_cast<std::int32_t>(it->second - sequence) < 0 ? home_.erase(it) : std::next(it);
}

void TrafficClassifier::journal_write(std::uint64_t length, Nanos device_time) {
  add(Traffic::journal, length, device_time);
}

void TrafficClassifier::data_write(std::uint64_t offset, std::uint64_t length, Nanos device_time) {
  if (length == 0) return;
  const std::uint64_t first = offset / block_size_;
  const std::uint64_t last = (offset + length - 1) / block_size_;
  std::uint64_t home = 0;
  if (!home_.empty()) {
    for (std::uint64_t b = first; b <= last; ++b) home += home_.erase(b);
  }
  const std::uint64_t blocks = last - first + 1;
  const std::uint64_t home_bytes = std::min(length, home * block_size_);
  const Nanos home_time = static_cast<Nanos>(static_cast<double>(device_time) * static_cast<double>(home) /
                                             static_cast<double>(blocks));
  if (home > 0) add(Traffic::checkpoint, home_bytes, home_time);
  if (home == blocks) return;
  if (pending_.size() >= kMaxPending) {
    add(Traffic::other, pending_.front().bytes, pending_.front().device_time);
    pending_.pop_front();
  }
  pending_.push_back(Pending{first, blocks, length - home_bytes, device_time - home_time, 0});
}

TrafficTotals TrafficClassifier::totals() const {
  TrafficTotals t = totals_;
  const auto other = static_cast<std::size_t>(Traffic::other);
  for (const Pending& p : pending_) {
    t.bytes[other] += p.bytes;
    t.device_time[other] += p.device_time;
    ++t.writes[other];
  }
  return t;
}

void TrafficClassifier::reset() {
  totals_ = TrafficTotals{};
  pending_.clear();
}

}  // namespace nvj
