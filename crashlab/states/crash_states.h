// SPDX-License-Identifier: BSD-3-Clause
// Crash states: at each crash point (crashlab/states/crash_points.h), what the exports may
// hold after the power is cut: the changes durable by then, plus a subset of
// the volatile ones, applied in the recording's order. Which subsets are
// tried is the strategy:
//
//   none     no volatile change kept (the durable set alone)
//   all      every volatile change kept
//   keep1    each volatile change alone (every subset of size 1)
//   keep2    each pair of volatile changes (size 2; B3-style bounded)
//   prefix   the first i volatile changes in the order they were sent (a
//            cache that drains in order), for 0 < i < all
//   random   seeded random subsets, each change kept with probability 1/2
//   torn     for each volatile write that spans more than one atomic unit
//            (its export's, from the recording, unless one is given for
//            all; a multiple of 512 bytes: the device's addresses, not the
//            write's, set the units' boundaries), the volatile changes sent
//            before it kept and it kept in part: its first units, up to a
//            boundary, cut at up to `torn` boundaries spread evenly over it
//            (a cache that drains in order, the power lost in the middle of
//            a write); later ones dropped
//
// States with the same contents are enumerated once between two marks, the
// first time (a mark may bring a fact, which the states before it were
// not checked against, so after it the same contents are a new state).
// StatePrints (crashlab/states/state_prints.h) tells them: a fingerprint of the contents
// kept up to date as the points go by (no image is built), and a state
// whose fingerprint an earlier one of the window has is compared with it
// sector by sector before it is merged, so no collision merges two states.
// A recording with a change or base not on 512-byte sectors, or whose bases
// and changes cover more than 4Mi sectors (2 GiB), gets no fingerprints:
// then no state is merged, and the enumeration says so.
//
// Every state is named by a StateKey: its point, its strategy and which
// subset the strategy took there, from which state_of() builds it again. The
// order of the states is fixed by the recording and the options, so that a
// state's place in it (its ordinal among the unique states) is the same on
// any machine. Pure.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "crashlab/states/crash_points.h"
#include "crashlab/index/recording_index.h"
#include "crashlab/states/torn_write.h"

namespace crashlab {

enum class Strategy : std::uint8_t { none, all, keep1, keep2, prefix, random, torn };
inline constexpr std::size_t kStrategies = 7;
const char* to_string(Strategy strategy);

struct StrategyOptions {
  bool none = true;
  bool all = true;
  unsigned keep = 2;    // keep1 (1), and keep2 (2); 0: neither
  bool prefix = true;
  unsigned random = 0;  // random subsets per point
  std::uint64_t seed = 1;
  unsigned torn = 0;    // cuts per volatile write (0: no torn states)
  std::uint64_t torn_unit = 0;  // the atomic unit, bytes: a multiple of 512; 0: each export's, from the recording
  // For the tests: fingerprints cut to this many bits collide often, and
  // merging must stay exact.
  unsigned fingerprint_bits = 64;
};

// A crash state by name: the subset its strategy took at its point.
struct StateKey {
  std::uint32_t point = 0;  // index in the points
  Strategy strategy = Strategy::none;
  // keep1: the volatile change (its place in the point's list); keep2: the
  // first of the two; prefix: how many; random: which draw; torn: the torn
  // write (its place in the list).
  std::uint32_t a = 0;
  std::uint32_t b = 0;  // keep2: the second; torn: which cut
  bool operator==(const StateKey&) const = default;
};

struct CrashState {
  StateKey key;
  std::size_t point = 0;  // key.point
  Strategy strategy = Strategy::none;  // key.strategy
  std::vector<std::size_t> kept;  // indices in changes() of the volatile changes kept whole, in order
  std::optional<TornWrite> torn;  // a volatile write kept in part, sent after every one of `kept`
  std::uint64_t fingerprint = 0;  // of its contents (equal contents, equal fingerprints; not the reverse)
  bool first = true;              // no earlier state of its window had these contents
};

struct StrategyCount {
  std::uint64_t states = 0;  // enumerated
  std::uint64_t unique = 0;  // with contents no earlier state had
};

struct Enumeration {
  std::array<StrategyCount, kStrategies> by_strategy{};
  std::uint64_t states = 0;
  std::uint64_t unique = 0;
  bool fingerprints = true;  // false: changes off 512-byte sectors or too many, nothing merged
  std::uint64_t collisions = 0;  // fingerprints equal, contents not (compared apart, not merged)
};

// Where a torn write of [offset, offset + length) may be cut: at most
// `most` of the atomic units' boundaries inside it, spread evenly, as bytes
// kept from its start, in order (all of them when it has no more).
std::vector<std::uint64_t> torn_cuts(std::uint64_t offset, std::uint64_t length, std::uint64_t unit, unsigned most);

// Builds the state `key` names again (its fingerprint and `first` left
// out). Throws std::out_of_range for a key no enumeration with these
// points and options makes.
CrashState state_of(const RecordingIndex& index, const std::vector<CrashPoint>& points, const StrategyOptions& options,
                    const StateKey& key);

// Enumerates the states of every point, calling `visit` for each (may be
// empty, to count only); a checker checks those that come `first`. Throws
// std::invalid_argument for a torn_unit that is not a multiple of 512.
Enumeration enumerate_crash_states(const RecordingIndex& index, const std::vector<CrashPoint>& points,
                                   const StrategyOptions& options,
                                   const std::function<void(const CrashState&)>& visit);

}  // namespace crashlab
