// SPDX-License-Identifier: BSD-3-Clause
// StatePrints: which crash states hold the same contents, told without
// building any image. Every 512-byte sector the recording's bases and
// changes hold is interned once (equal bytes, one number, compared byte for
// byte); a state's contents are the durable contents at its crash point,
// kept up to date as the points go by, with its kept changes and its torn
// write's first sectors on top, each where it was sent later than what
// holds the sector (the recording's order). A state's fingerprint is the
// XOR over every sector of a hash (crashlab/states/hash.h) of (the sector, its bytes), and
// costs the sectors of its kept changes. Two states with the same
// fingerprint are compared sector by sector (same()) before they are called
// the same: a collision of fingerprints never merges two states.
//
// Comparing a state with one at an earlier point needs the durable value
// each sector had there: every value a sector takes from the start of the
// current window (window(): a mark, before which states are never compared
// with again) is kept. Off (no fingerprints: every state its own) when a
// base or a change is not on whole 512-byte sectors, or they cover more than
// 4Mi sectors (2 GiB) in all. Pure.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

#include "crashlab/index/recording_index.h"
#include "crashlab/states/torn_write.h"

namespace crashlab {

class StatePrints {
 public:
  // `fingerprint_bits` below 64 keeps only the low bits of every
  // fingerprint (a test makes them collide so); the merging stays exact.
  explicit StatePrints(const RecordingIndex& index, unsigned fingerprint_bits = 64);

  bool on() const { return on_; }

  // The changes durable right after frame `sequence` join the durable
  // contents; `point` numbers that crash point. Both only grow.
  void advance(std::size_t point, std::uint64_t sequence);
  // A new window from the current point on: same() compares states of it.
  void window();

  // The fingerprint of the state with `kept` (indices in changes(), in the
  // recording's order) and `torn` at the current point.
  std::uint64_t fingerprint(const std::vector<std::size_t>& kept, const std::optional<TornWrite>& torn);

  // Whether that state holds exactly what (`other_kept`, `other_torn`) held
  // at `other_point`, a point of the current window at or before the
  // current one.
  bool same(const std::vector<std::size_t>& kept, const std::optional<TornWrite>& torn, std::size_t other_point,
            const std::vector<std::size_t>& other_kept, const std::optional<TornWrite>& other_torn);

  // The fingerprint of exports of these sizes holding `read`'s bytes, made
  // from scratch: what a state's is kept equal to (for the tests).
  template <typename Read>
  static std::uint64_t from_contents(const std::vector<std::uint64_t>& sizes, Read&& read);

 private:
  struct Cell {  // what holds a sector: the change sent at `sequence` (0: a base, or nothing)
    std::uint64_t sequence = 0;
    std::uint32_t id = 0;  // the interned bytes; 0: zeroes
  };
  // What a state puts over the durable contents: (sector, cell), sorted by
  // sector, one each.
  using Winners = std::vector<std::pair<std::uint64_t, Cell>>;

  std::uint32_t intern(const std::uint8_t* sector);
  void land(std::uint64_t key, Cell cell);
  Cell durable_now(std::uint64_t key) const;
  Cell durable_at(std::uint64_t key, std::size_t point) const;
  // The sectors a state's changes hold where sent later than the durable
  // contents (`at` gives them).
  template <typename Durable>
  void winners(const std::vector<std::size_t>& kept, const std::optional<TornWrite>& torn, Durable&& at,
               Winners& out) const;
  static std::uint64_t share(std::uint64_t key, std::uint64_t hash);

  const RecordingIndex& index_;
  bool on_ = true;
  std::uint64_t mask_ = ~std::uint64_t{0};
  // Interned sectors: id -> their bytes (in the recording) and hash; the
  // ids of each hash, compared byte for byte.
  std::vector<const std::uint8_t*> bytes_of_{nullptr};
  std::vector<std::uint64_t> hash_of_{0};
  std::unordered_map<std::uint64_t, std::vector<std::uint32_t>> ids_by_hash_;
  std::vector<std::vector<std::pair<std::uint64_t, std::uint32_t>>> sectors_;  // per change: (sector, id)
  std::unordered_map<std::uint64_t, Cell> durable_;
  std::uint64_t print_ = 0;  // of the durable contents
  std::size_t next_durable_ = 0;  // in durable_order()
  std::size_t point_ = 0;
  // The window: the values each sector changed in it took, from its
  // start ((point, value) in point order, the first the value before any
  // change), and the sectors changed at each point, in point order.
  std::size_t window_start_ = 0;
  std::unordered_map<std::uint64_t, std::vector<std::pair<std::size_t, Cell>>> history_;
  std::vector<std::pair<std::size_t, std::uint64_t>> changed_;
  Winners scratch_a_, scratch_b_;
};

// The share of one sector with bytes hashed to `hash` (0: zeroes, no share).
std::uint64_t sector_share(std::uint8_t device, std::uint64_t offset, std::uint64_t hash);
// The hash of a sector's bytes; 0 for zeroes.
std::uint64_t sector_hash(const std::uint8_t* sector);

template <typename Read>
std::uint64_t StatePrints::from_contents(const std::vector<std::uint64_t>& sizes, Read&& read) {
  std::uint64_t print = 0;
  std::uint8_t sector[512];
  for (std::size_t d = 0; d < sizes.size(); ++d)
    for (std::uint64_t at = 0; at + 512 <= sizes[d]; at += 512) {
      read(static_cast<std::uint8_t>(d), at, sector);
      print ^= sector_share(static_cast<std::uint8_t>(d), at, sector_hash(sector));
    }
  return print;
}

}  // namespace crashlab
