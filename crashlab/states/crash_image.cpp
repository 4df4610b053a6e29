// SPDX-License-Identifier: BSD-3-Clause
#include "crashlab/states/crash_image.h"

#include <algorithm>
#include <cstring>
#include <iterator>
#include <map>
#include <stdexcept>
#include <string>


namespace crashlab {

namespace {

// What the state's own writes are numbered from: later than any frame.
constexpr std::uint64_t kWrittenSequences = std::uint64_t{1} << 63;

const std::uint8_t* bytes_of(const IndexedChange& c) { return c.kind == FrameKind::write ? c.data.data() : nullptr; }

}  // namespace

CrashImage::CrashImage(const RecordingIndex& index) : index_(index), next_write_(kWrittenSequences) {
  for (const ExportInfo& e : index.exports()) exports_.push_back(std::unique_ptr<Export>(new Export(*this, e.size)));
  for (const IndexedBase& b : index.bases()) exports_.at(b.device)->durable_.put(b.offset, b.data.size(), 0, b.data.data());
}

std::optional<std::uint8_t> CrashImage::find(std::string_view name) const {
  for (std::size_t i = 0; i < index_.exports().size(); ++i)
    if (index_.exports()[i].name == name) return static_cast<std::uint8_t>(i);
  return std::nullopt;
}

void CrashImage::advance(std::uint64_t sequence) {
  const std::vector<std::size_t>& order = index_.durable_order();
  for (; next_durable_ < order.size() && index_.changes()[order[next_durable_]].durable <= sequence; ++next_durable_) {
    const IndexedChange& c = index_.changes()[order[next_durable_]];
    exports_.at(c.device)->durable_.put(c.offset, c.length, c.sequence, bytes_of(c));
  }
}

void CrashImage::set_state(const std::vector<std::size_t>& kept, const std::optional<TornWrite>& torn) {
  for (auto& e : exports_) {
    e->kept_.clear();
    e->written_.clear();
  }
  written_bytes_.clear();  // the pieces that pointed there are gone; their sequences are not reused
  for (const std::size_t i : kept) keep(i, index_.changes().at(i).length);  // in the recording's order: a later one wins
  if (torn) keep(torn->change, std::min<std::uint64_t>(torn->bytes, index_.changes().at(torn->change).length));
}

void CrashImage::keep(std::size_t i, std::uint64_t length) {
  const IndexedChange& c = index_.changes().at(i);
  Export& e = *exports_.at(c.device);
  const std::uint8_t* data = bytes_of(c);
  e.durable_.each(c.offset, length, [&](std::uint64_t from, std::uint64_t to, std::uint64_t sequence) {
    if (sequence < c.sequence)
      e.kept_.put(from, to - from, c.sequence, data == nullptr ? nullptr : data + (from - c.offset));
  });
}

void CrashImage::Export::read(std::uint64_t offset, std::span<std::uint8_t> bytes) const {
  if (offset > size_ || bytes.size() > size_ - offset)
    throw std::out_of_range("crash state: a read past the end of an export (" + std::to_string(bytes.size()) +
                            " bytes at " + std::to_string(offset) + ")");
  std::memset(bytes.data(), 0, bytes.size());
  durable_.read(offset, bytes);
  kept_.read(offset, bytes);
  written_.read(offset, bytes);
}

bool CrashImage::Export::identity(std::uint64_t offset, std::uint64_t length, std::vector<std::uint64_t>& key) const {
  if (offset > size_ || length > size_ - offset) return false;
  // Layer by layer, in order: the same pieces in every layer, the same bytes.
  key.push_back(length);
  durable_.identity(offset, length, key);
  kept_.identity(offset, length, key);
  written_.identity(offset, length, key, true);
  return true;
}

void CrashImage::Export::state_identity(std::uint64_t offset, std::uint64_t length, std::vector<std::uint64_t>& key) const {
  key.push_back(length);
  durable_.identity(offset, length, key);
  kept_.identity(offset, length, key);
}

std::vector<std::pair<std::uint64_t, std::uint64_t>> CrashImage::Export::covered() const {
  std::vector<std::pair<std::uint64_t, std::uint64_t>> ranges;
  for (const PieceMap* map : {&durable_, &kept_, &written_})
    for (const auto& [start, piece] : map->pieces()) ranges.emplace_back(start, piece.end);
  std::sort(ranges.begin(), ranges.end());
  std::vector<std::pair<std::uint64_t, std::uint64_t>> joined;
  for (const auto& r : ranges) {
    if (!joined.empty() && r.first <= joined.back().second)
      joined.back().second = std::max(joined.back().second, r.second);
    else
      joined.push_back(r);
  }
  return joined;
}

std::vector<std::pair<std::uint64_t, std::uint64_t>> CrashImage::Export::nonzero() const {
  std::map<std::uint64_t, std::uint64_t> ranges;  // start -> end, disjoint
  const auto cut = [&](std::uint64_t start, std::uint64_t end) {
    auto it = ranges.lower_bound(start);
    if (it != ranges.begin() && std::prev(it)->second > start) --it;
    while (it != ranges.end() && it->first < end) {
      const auto [from, to] = *it;
      it = ranges.erase(it);
      if (from < start) ranges.emplace(from, start);
      if (to > end) {
        ranges.emplace(end, to);
        break;
      }
    }
  };
  // Layer over layer, as read() lays them: a piece of zeroes hides what is below.
  for (const PieceMap* map : {&durable_, &kept_, &written_})
    for (const auto& [start, piece] : map->pieces()) {
      cut(start, piece.end);
      if (piece.data != nullptr) ranges.emplace(start, piece.end);
    }
  std::vector<std::pair<std::uint64_t, std::uint64_t>> joined;
  for (const auto& r : ranges) {
    if (!joined.empty() && r.first == joined.back().second)
      joined.back().second = r.second;
    else
      joined.push_back(r);
  }
  return joined;
}

void CrashImage::Export::write(std::uint64_t offset, std::span<const std::uint8_t> bytes) {
  if (offset > size_ || bytes.size() > size_ - offset)
    throw std::out_of_range("crash state: a write past the end of an export (" + std::to_string(bytes.size()) +
                            " bytes at " + std::to_string(offset) + ")");
  if (bytes.empty()) return;
  auto copy = std::make_unique<std::uint8_t[]>(bytes.size());
  std::memcpy(copy.get(), bytes.data(), bytes.size());
  written_.put(offset, bytes.size(), image_.next_write_++, copy.get());
  image_.written_bytes_.push_back(std::move(copy));
}

}  // namespace crashlab
