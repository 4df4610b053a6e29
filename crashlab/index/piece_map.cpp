// SPDX-License-Identifier: BSD-3-Clause
#include "crashlab/index/piece_map.h"

#include <algorithm>
#include <cstring>
#include <iterator>

namespace crashlab {

namespace {

// The first piece that ends after `offset`.
template <typename Map>
auto first_after(Map& pieces, std::uint64_t offset) {
  auto it = pieces.upper_bound(offset);
  if (it != pieces.begin()) {
    auto before = std::prev(it);
    if (before->second.end > offset) return before;
  }
  return it;
}

const std::uint8_t* advance(const std::uint8_t* data, std::uint64_t by) { return data == nullptr ? nullptr : data + by; }

}  // namespace

void PieceMap::split(std::uint64_t at) {
  auto it = first_after(pieces_, at);
  if (it == pieces_.end() || it->first >= at) return;
  Piece tail = it->second;
  tail.data = advance(tail.data, at - it->first);
  it->second.end = at;
  pieces_.emplace_hint(std::next(it), at, tail);
}

void PieceMap::put(std::uint64_t offset, std::uint64_t length, std::uint64_t sequence, const std::uint8_t* data) {
  if (length == 0) return;
  const std::uint64_t end = offset + length;
  split(offset);
  split(end);
  std::uint64_t at = offset;
  auto it = pieces_.lower_bound(offset);
  while (at < end) {
    const std::uint64_t next = (it == pieces_.end() || it->first >= end) ? end : it->first;
    if (next > at) {  // a gap: nothing held it
      it = pieces_.emplace_hint(it, at, Piece{next, sequence, advance(data, at - offset)});
    } else if (it->second.sequence < sequence) {
      it->second.sequence = sequence;
      it->second.data = advance(data, at - offset);
    }
    at = it->second.end;
    ++it;
  }
  // Joins neighbours that continue each other, so that a map that pieces
  // were put over and over does not fragment.
  auto cur = first_after(pieces_, offset == 0 ? 0 : offset - 1);
  while (cur != pieces_.end() && cur->first <= end) {
    auto nxt = std::next(cur);
    if (nxt == pieces_.end()) break;
    const Piece& a = cur->second;
    const Piece& b = nxt->second;
    if (a.end == nxt->first && a.sequence == b.sequence && advance(a.data, a.end - cur->first) == b.data) {
      cur->second.end = b.end;
      pieces_.erase(nxt);
    } else {
      cur = nxt;
    }
  }
}

void PieceMap::read(std::uint64_t offset, std::span<std::uint8_t> out) const {
  if (out.empty()) return;  // its data() may be null, which memset and memcpy must not see
  const std::uint64_t end = offset + out.size();
  for (auto it = first_after(pieces_, offset); it != pieces_.end() && it->first < end; ++it) {
    const std::uint64_t from = std::max(offset, it->first);
    const std::uint64_t to = std::min(end, it->second.end);
    std::uint8_t* dst = out.data() + (from - offset);
    if (it->second.data == nullptr)
      std::memset(dst, 0, to - from);
    else
      std::memcpy(dst, it->second.data + (from - it->first), to - from);
  }
}

void PieceMap::identity(std::uint64_t offset, std::uint64_t length, std::vector<std::uint64_t>& key,
                        bool with_sequence) const {
  const std::size_t count_at = key.size();
  key.push_back(0);
  const std::uint64_t end = offset + length;
  for (auto it = first_after(pieces_, offset); it != pieces_.end() && it->first < end; ++it) {
    const std::uint64_t from = std::max(offset, it->first);
    const std::uint64_t to = std::min(end, it->second.end);
    const std::uint8_t* data = advance(it->second.data, from - it->first);
    key.push_back(from - offset);
    key.push_back(to - from);
    key.push_back(reinterpret_cast<std::uintptr_t>(data));
    if (with_sequence) key.push_back(it->second.sequence);
    ++key[count_at];
  }
}

void PieceMap::each(std::uint64_t offset, std::uint64_t length,
                    const std::function<void(std::uint64_t, std::uint64_t, std::uint64_t)>& visit) const {
  const std::uint64_t end = offset + length;
  std::uint64_t at = offset;
  for (auto it = first_after(pieces_, offset); it != pieces_.end() && it->first < end && at < end; ++it) {
    if (it->first > at) visit(at, it->first, 0);
    const std::uint64_t to = std::min(end, it->second.end);
    visit(std::max(at, it->first), to, it->second.sequence);
    at = to;
  }
  if (at < end) visit(at, end, 0);
}

}  // namespace crashlab
