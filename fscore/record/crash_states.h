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
//
// States with the same contents are enumerated once, the first time: each
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
#include <vector>

#include "fscore/record/crash_points.h"
#include "fscore/record/recording_index.h"
#include "fscore/record/replayed_exports.h"

namespace fscore::record {

enum class Strategy : std::uint8_t { none, all, keep1, keep2, prefix, random };
inline constexpr std::size_t kStrategies = 6;
const char* to_string(Strategy strategy);

struct StrategyOptions {
  bool none = true;
  bool all = true;
  unsigned keep = 2;    // keep1 (1), and keep2 (2); 0: neither
  bool prefix = true;
  unsigned random = 0;  // random subsets per point
  std::uint64_t seed = 1;
};

struct CrashState {
  std::size_t point = 0;  // index in the points
  Strategy strategy = Strategy::none;
  std::vector<std::size_t> kept;  // indices in changes() of the volatile changes kept, in order
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

// The fingerprint of what `exports` hold, computed from scratch, sector by
// sector: what a state's fingerprint is kept equal to (exports sized in
// whole sectors).
std::uint64_t fingerprint_of(const ReplayedExports& exports, std::size_t count);

// Enumerates the states of every point, calling `visit` for each (may be
// empty, to count only); a checker checks those that come `first`.
Enumeration enumerate_crash_states(const RecordingIndex& index, const std::vector<CrashPoint>& points,
                                   const StrategyOptions& options,
                                   const std::function<void(const CrashState&)>& visit);

}  // namespace fscore::record
