// The crash lab's check: every crash state of a recording (crash_points.h,
// crash_states.h) with contents no earlier state had, built in place
// (CrashImage) and checked by the fast path (state_check.h) against the
// facts marked before its crash point (FactOracle). The unique states, by
// ordinal (their place among the unique states, in the enumeration's fixed
// order), go to shards in blocks of 64: block B (ordinals 64B to 64B + 63)
// to shard B modulo N. Shards are disjoint, cover every state together and
// are the same on every machine; states next to each other share most of
// their contents, which a block keeps together, and the blocks spread the
// early, small states and the late, large ones over every shard. Pure.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "crashlab/crash_points.h"
#include "crashlab/crash_states.h"
#include "fscore/record/fact.h"
#include "crashlab/recording_index.h"
#include "crashlab/state_check.h"

namespace crashlab {

// From the recording's format (fscore/record/).
using fscore::record::Fact;
using fscore::record::parse_fact;
using fscore::record::FactError;

// The fact each mark states (nullopt: a mark that is no fact). Throws
// std::runtime_error naming the mark (its number and frame) whose label
// starts with "fact " and is malformed.
std::vector<std::optional<Fact>> facts_of(const RecordingIndex& index);

struct CheckOptions {
  CrashPointOptions points;
  StrategyOptions strategies;
  std::uint64_t shard = 0;   // this shard's index, below `shards`
  std::uint64_t shards = 1;
  std::uint32_t now = 0;     // the time journal replays stamp (superblock s_wtime)
};

struct CheckedState {
  std::uint64_t ordinal = 0;  // among the unique states
  const CrashState* state = nullptr;
  const CrashPoint* point = nullptr;
  StateVerdict verdict;
};

struct CheckTotals {
  Enumeration enumeration;  // every state, every shard
  std::uint64_t checked = 0;  // by this shard
  std::array<std::uint64_t, 3> by_verdict{};  // indexed by Verdict
  std::uint64_t failing() const { return checked - by_verdict[0]; }
};

class CrashImage;
class FactOracle;

// One state as CrashChecker::walk hands it over: built in `image` (its
// `data` export the filesystem, `journal` its external journal if the
// recording has one), `oracle` holding the facts marked before its point.
struct StateContext {
  std::uint64_t ordinal = 0;
  const CrashState& state;
  const CrashPoint& point;
  CrashImage& image;
  std::uint8_t data = 0;
  std::optional<std::uint8_t> journal;
  const FactOracle& oracle;
};

class CrashChecker {
 public:
  // Throws std::invalid_argument for a shard out of range, and what
  // facts_of throws.
  CrashChecker(const RecordingIndex& index, const CheckOptions& options);

  const std::vector<CrashPoint>& points() const { return points_; }
  // Whether the state with this ordinal is this shard's.
  bool mine(std::uint64_t ordinal) const { return ordinal / kShardBlock % options_.shards == options_.shard; }
  // How many of the unique states are this shard's.
  std::uint64_t share() const;
  static constexpr std::uint64_t kShardBlock = 64;
  const std::vector<std::optional<Fact>>& facts() const { return facts_; }
  // The states per strategy, counted without checking any.
  const Enumeration& count() const { return counted_; }
  // Builds this shard's unique states in order, one at a time, calling
  // `visit` with each; returns the enumeration of every state.
  Enumeration walk(const std::function<void(StateContext&)>& visit) const;
  // Checks this shard's states in order by the fast path, calling
  // `on_state` after each.
  CheckTotals run(const std::function<void(const CheckedState&)>& on_state) const;

 private:
  const RecordingIndex& index_;
  CheckOptions options_;
  std::vector<CrashPoint> points_;
  std::vector<std::optional<Fact>> facts_;
  Enumeration counted_;
};

}  // namespace crashlab
