// SPDX-License-Identifier: BSD-3-Clause
#include "crashlab/states/state_prints.h"

#include <algorithm>
#include <cstring>

#include "crashlab/states/hash.h"

namespace crashlab {

namespace {

constexpr std::uint64_t kSector = 512;
// Sectors followed at most (the bases' and every change's): past that, no
// fingerprints.
constexpr std::uint64_t kMaxSectors = std::uint64_t{4} << 20;

// A sector of an export, as a key.
std::uint64_t key_of(std::uint8_t device, std::uint64_t offset) { return std::uint64_t{device} << 56 | offset / kSector; }

bool all_zero(const std::uint8_t* p) {
  std::uint64_t any = 0;
  for (std::size_t i = 0; i < kSector; i += 8) {
    std::uint64_t w;
    std::memcpy(&w, p + i, 8);
    any |= w;
  }
  return any == 0;
}

}  // namespace

std::uint64_t sector_hash(const std::uint8_t* sector) {
  if (all_zero(sector)) return 0;
  return hash_bytes(sector, kSector) | 1;
}

std::uint64_t StatePrints::share(std::uint64_t key, std::uint64_t hash) { return hash == 0 ? 0 : hash_of(key, hash); }

std::uint64_t sector_share(std::uint8_t device, std::uint64_t offset, std::uint64_t hash) {
  return hash == 0 ? 0 : hash_of(key_of(device, offset), hash);
}

StatePrints::StatePrints(const RecordingIndex& index, unsigned fingerprint_bits) : index_(index) {
  if (fingerprint_bits < 64) mask_ = (std::uint64_t{1} << fingerprint_bits) - 1;
  const auto aligned = [](std::uint64_t offset, std::uint64_t length) {
    return offset % kSector == 0 && length % kSector == 0;
  };
  std::uint64_t sectors = 0;
  for (const IndexedBase& b : index.bases()) {
    on_ = on_ && aligned(b.offset, b.data.size());
    sectors += b.data.size() / kSector;
  }
  for (const IndexedChange& c : index.changes()) {
    on_ = on_ && aligned(c.offset, c.length);
    sectors += c.length / kSector;
  }
  on_ = on_ && sectors <= kMaxSectors;
  if (!on_) return;
  for (const IndexedBase& b : index.bases())
    for (std::uint64_t at = 0; at < b.data.size(); at += kSector)
      land(key_of(b.device, b.offset + at), Cell{0, intern(b.data.data() + at)});
  history_.clear();
  changed_.clear();
  sectors_.resize(index.changes().size());
  for (std::size_t i = 0; i < index.changes().size(); ++i) {
    const IndexedChange& c = index.changes()[i];
    auto& s = sectors_[i];
    s.reserve(c.length / kSector);
    for (std::uint64_t at = 0; at < c.length; at += kSector)
      s.emplace_back(key_of(c.device, c.offset + at), c.kind == FrameKind::write ? intern(c.data.data() + at) : 0);
  }
}

std::uint32_t StatePrints::intern(const std::uint8_t* sector) {
  const std::uint64_t hash = sector_hash(sector);
  if (hash == 0) return 0;
  std::vector<std::uint32_t>& ids = ids_by_hash_[hash];
  for (const std::uint32_t id : ids)
    if (std::memcmp(bytes_of_[id], sector, kSector) == 0) return id;
  const auto id = static_cast<std::uint32_t>(bytes_of_.size());
  bytes_of_.push_back(sector);
  hash_of_.push_back(hash);
  ids.push_back(id);
  return id;
}

// A sector takes `cell` unless a change sent later holds it already.
void StatePrints::land(std::uint64_t key, Cell cell) {
  auto [it, added] = durable_.try_emplace(key, Cell{});
  if (!added && it->second.sequence > cell.sequence) return;
  const Cell old = it->second;
  print_ ^= share(key, hash_of_[old.id]) ^ share(key, hash_of_[cell.id]);
  it->second = cell;
  auto& h = history_[key];
  if (h.empty()) h.emplace_back(window_start_, old);
  if (h.back().first == point_)
    h.back().second = cell;
  else
    h.emplace_back(point_, cell);
  changed_.emplace_back(point_, key);
}

void StatePrints::advance(std::size_t point, std::uint64_t sequence) {
  point_ = point;
  if (!on_) return;
  const std::vector<std::size_t>& order = index_.durable_order();
  for (; next_durable_ < order.size() && index_.changes()[order[next_durable_]].durable <= sequence; ++next_durable_) {
    const std::size_t i = order[next_durable_];
    const std::uint64_t sent = index_.changes()[i].sequence;
    for (const auto& [key, id] : sectors_[i]) land(key, Cell{sent, id});
  }
}

void StatePrints::window() {
  window_start_ = point_;
  history_.clear();
  changed_.clear();
}

StatePrints::Cell StatePrints::durable_now(std::uint64_t key) const {
  const auto it = durable_.find(key);
  return it == durable_.end() ? Cell{} : it->second;
}

StatePrints::Cell StatePrints::durable_at(std::uint64_t key, std::size_t point) const {
  const auto it = history_.find(key);
  if (it == history_.end()) return durable_now(key);  // unchanged in the window
  const auto& h = it->second;
  const auto after = std::upper_bound(h.begin(), h.end(), point,
                                      [](std::size_t p, const std::pair<std::size_t, Cell>& e) { return p < e.first; });
  return after == h.begin() ? h.front().second : std::prev(after)->second;
}

template <typename Durable>
void StatePrints::winners(const std::vector<std::size_t>& kept, const std::optional<TornWrite>& torn, Durable&& at,
                          Winners& out) const {
  out.clear();
  const auto put = [&](std::size_t change, std::size_t sectors) {
    const std::uint64_t sent = index_.changes()[change].sequence;
    const auto& list = sectors_[change];
    for (std::size_t k = 0; k < sectors && k < list.size(); ++k) out.emplace_back(list[k].first, Cell{sent, list[k].second});
  };
  for (const std::size_t i : kept) put(i, sectors_[i].size());
  if (torn) put(torn->change, static_cast<std::size_t>(torn->bytes / kSector));
  // By sector, the one sent last first; then one per sector, kept only where
  // it was sent later than the durable contents there.
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first < b.first : a.second.sequence > b.second.sequence;
  });
  std::size_t n = 0;
  for (std::size_t i = 0; i < out.size();) {
    const std::pair<std::uint64_t, Cell> last = out[i];
    while (i < out.size() && out[i].first == last.first) ++i;  // and the ones sent before it, under it
    if (last.second.sequence > at(last.first).sequence) out[n++] = last;
  }
  out.resize(n);
}

std::uint64_t StatePrints::fingerprint(const std::vector<std::size_t>& kept, const std::optional<TornWrite>& torn) {
  winners(kept, torn, [this](std::uint64_t key) { return durable_now(key); }, scratch_a_);
  std::uint64_t print = print_;
  for (const auto& [key, cell] : scratch_a_)
    print ^= share(key, hash_of_[durable_now(key).id]) ^ share(key, hash_of_[cell.id]);
  return print & mask_;
}

bool StatePrints::same(const std::vector<std::size_t>& kept, const std::optional<TornWrite>& torn, std::size_t other_point,
                       const std::vector<std::size_t>& other_kept, const std::optional<TornWrite>& other_torn) {
  Winners& mine = scratch_a_;
  Winners& theirs = scratch_b_;
  winners(kept, torn, [this](std::uint64_t key) { return durable_now(key); }, mine);
  winners(other_kept, other_torn, [&](std::uint64_t key) { return durable_at(key, other_point); }, theirs);
  const auto in = [](const Winners& w, std::uint64_t key) -> const Cell* {
    const auto it = std::lower_bound(w.begin(), w.end(), key, [](const auto& e, std::uint64_t k) { return e.first < k; });
    return it != w.end() && it->first == key ? &it->second : nullptr;
  };
  const auto value_mine = [&](std::uint64_t key) {
    const Cell* c = in(mine, key);
    return c != nullptr ? c->id : durable_now(key).id;
  };
  const auto value_theirs = [&](std::uint64_t key) {
    const Cell* c = in(theirs, key);
    return c != nullptr ? c->id : durable_at(key, other_point).id;
  };
  for (const auto& [key, cell] : mine)
    if (value_theirs(key) != cell.id) return false;
  for (const auto& [key, cell] : theirs)
    if (value_mine(key) != cell.id) return false;
  // The sectors whose durable contents changed between the two points.
  const auto from = std::upper_bound(changed_.begin(), changed_.end(), other_point,
                                     [](std::size_t p, const std::pair<std::size_t, std::uint64_t>& e) { return p < e.first; });
  for (auto it = from; it != changed_.end(); ++it)
    if (value_mine(it->second) != value_theirs(it->second)) return false;
  return true;
}

}  // namespace crashlab
