// Crash states: at each crash point (crash_points.h), what the exports may
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
// not checked against, so after it the same contents are a new state): each
// state's fingerprint is a 64-bit hash of what every 512-byte sector of
// every export holds, kept up to date as the points go by (no image is
// built). A recording with a change or base not on 512-byte sectors, or
// whose bases and changes cover more than 4Mi sectors (2 GiB), gets no
// fingerprints: then no state is merged, and the enumeration says so. The
// order of the states is fixed by the recording and the options, so that a
// shard of them (by index) is the same on any machine. Pure.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "crashlab/crash_points.h"
#include "crashlab/recording_index.h"
#include "fscore/record/replayed_exports.h"
#include "crashlab/torn_write.h"

namespace crashlab {

// From the recording's format (fscore/record/).
using fscore::record::ReplayedExports;

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
};

struct CrashState {
  std::size_t point = 0;  // index in the points
  Strategy strategy = Strategy::none;
  std::vector<std::size_t> kept;  // indices in changes() of the volatile changes kept whole, in order
  std::optional<TornWrite> torn;  // a volatile write kept in part, sent after every one of `kept`
  std::uint64_t fingerprint = 0;  // of its contents
  bool first = true;              // no earlier state had these contents
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
};

// Where a torn write of [offset, offset + length) may be cut: at most
// `most` of the atomic units' boundaries inside it, spread evenly, as bytes
// kept from its start, in order (all of them when it has no more).
std::vector<std::uint64_t> torn_cuts(std::uint64_t offset, std::uint64_t length, std::uint64_t unit, unsigned most);

// The fingerprint of what `exports` hold, computed from scratch, sector by
// sector: what a state's fingerprint is kept equal to (exports sized in
// whole sectors).
std::uint64_t fingerprint_of(const ReplayedExports& exports, std::size_t count);

// Enumerates the states of every point, calling `visit` for each (may be
// empty, to count only); a checker checks those that come `first`. Throws
// std::invalid_argument for a torn_unit that is not a multiple of 512.
Enumeration enumerate_crash_states(const RecordingIndex& index, const std::vector<CrashPoint>& points,
                                   const StrategyOptions& options,
                                   const std::function<void(const CrashState&)>& visit);

}  // namespace crashlab
