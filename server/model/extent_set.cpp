#include "server/model/extent_set.h"

#include <algorithm>
#include <iterator>

namespace nvj {

void ExtentSet::insert(std::uint64_t begin, std::uint64_t end) {
  if (begin >= end) return;
  // Absorb every range that overlaps or touches [begin, end).
  auto it = ranges_.upper_bound(begin);
  if (it != ranges_.begin() && std::prev(it)->second >= begin) --it;
  while (it != ranges_.end() && it->first <= end) {
    begin = std::min(begin, it->first);
    end = std::max(end, it->second);
    bytes_ -= it->second - it->first;
    it = ranges_.erase(it);
  }
  ranges_.emplace(begin, end);
  bytes_ += end - begin;
}

void ExtentSet::erase(std::uint64_t begin, std::uint64_t end) {
  if (begin >= end) return;
  auto it = ranges_.upper_bound(begin);
  if (it != ranges_.begin() && std::prev(it)->second > begin) --it;
  while (it != ranges_.end() && it->first < end) {
    const std::uint64_t b = it->first;
    const std::uint64_t e = it->second;
    bytes_ -= e - b;
    it = ranges_.erase(it);
    if (b < begin) {
      ranges_.emplace(b, begin);
      bytes_ += begin - b;
    }
    if (e > end) {
      it = ranges_.emplace(end, e).first;
      bytes_ += e - end;
      ++it;
    }
  }
}

bool ExtentSet::contains(std::uint64_t begin, std::uint64_t end) const {
  if (begin >= end) return true;
  auto it = ranges_.upper_bound(begin);
  if (it == ranges_.begin()) return false;
  --it;
  return it->first <= begin && it->second >= end;
}

std::optional<ExtentSet::Range> ExtentSet::next_from(std::uint64_t pos) const {
  if (ranges_.empty()) return std::nullopt;
  auto it = ranges_.upper_bound(pos);
  if (it != ranges_.begin() && std::prev(it)->second > pos) --it;
  if (it == ranges_.end()) it = ranges_.begin();
  return Range{it->first, it->second};
}

}  // namespace nvj
