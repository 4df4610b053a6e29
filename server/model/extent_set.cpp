// SPDX-License-Identifier: BSD-3-Clause
#include "server/model/extent_set.h"

#include <iterator>

namespace nvj {

ExtentSet::Map::iterator ExtentSet::add(std::uint64_t begin, std::uint64_t end, std::uint8_t tag) {
  bytes_ += end - begin;
  tag_bytes_[tag] += end - begin;
  return ranges_.emplace(begin, Extent{end, tag}).first;
}

ExtentSet::Map::iterator ExtentSet::remove(Map::iterator it) {
  const std::uint64_t n = it->second.end - it->first;
  bytes_ -= n;
  tag_bytes_[it->second.tag] -= n;
  return ranges_.erase(it);
}

void ExtentSet::insert(std::uint64_t begin, std::uint64_t end, std::uint8_t tag) {
  if (begin >= end) return;
  erase(begin, end);  // older bytes of any tag give way
  // Join the neighbours of the same tag that touch it.
  auto next = ranges_.lower_bound(end);
  if (next != ranges_.end() && next->first == end && next->second.tag == tag) {
    end = next->second.end;
    next = remove(next);
  }
  if (next != ranges_.begin()) {
    const auto prev = std::prev(next);
    if (prev->second.end == begin && prev->second.tag == tag) {
      begin = prev->first;
      remove(prev);
    }
  }
  add(begin, end, tag);
}

void ExtentSet::erase(std::uint64_t begin, std::uint64_t end) {
  if (begin >= end) return;
  auto it = ranges_.upper_bound(begin);
  if (it != ranges_.begin() && std::prev(it)->second.end > begin) --it;
  while (it != ranges_.end() && it->first < end) {
    const std::uint64_t b = it->first;
    const auto [e, tag] = it->second;
    it = remove(it);
    if (b < begin) add(b, begin, tag);
    if (e > end) it = std::next(add(end, e, tag));
  }
}

bool ExtentSet::contains(std::uint64_t begin, std::uint64_t end) const {
  if (begin >= end) return true;
  auto it = ranges_.upper_bound(begin);
  if (it == ranges_.begin()) return false;
  --it;
  if (it->second.end <= begin) return false;
  // Walk ranges of other tags that follow without a gap.
  std::uint64_t reached = it->second.end;
  for (++it; reached < end && it != ranges_.end() && it->first == reached; ++it) reached = it->second.end;
  return reached >= end;
}

std::optional<ExtentSet::Range> ExtentSet::next_from(std::uint64_t pos) const {
  if (ranges_.empty()) return std::nullopt;
  auto it = ranges_.upper_bound(pos);
  if (it != ranges_.begin() && std::prev(it)->second.end > pos) --it;
  if (it == ranges_.end()) it = ranges_.begin();
  return Range{it->first, it->second.end, it->second.tag};
}

}  // namespace nvj
