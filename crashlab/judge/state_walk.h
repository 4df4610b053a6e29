// SPDX-License-Identifier: BSD-3-Clause
// The crash lab's check: the crash states of a recording (crashlab/states/crash_points.h,
// crashlab/states/crash_states.h) with contents no earlier state had, built in place
// (CrashImage) and checked by the fast path (crashlab/judge/fast_path.h) against the
// facts marked before their crash point (FactChecker).
//
// Which states: every unique state, or with a budget (max_states) smaller
// than their number a sample of them spread over every crash point and
// strategy (crashlab/states/state_sample.h). A state keeps its ordinal (its place among the
// unique states, in the enumeration's fixed order) whether it is sampled or
// not; the states taken are numbered again by position (their place among
// those taken). Positions go to shards in blocks of 64: block B (positions
// 64B to 64B + 63) to shard B modulo N. Shards are disjoint, cover every
// state taken together and are the same on every machine; states next to
// each other share most of their contents, which a block keeps together,
// and the blocks spread the early, small states and the late, large ones
// over every shard.
//
// A shard's states are checked in kRounds rounds of growing density: every
// 64th first, then the one halfway between, and so on, each round a walk
// from the start of the recording. A check stopped early (a time limit, a
// signal, enough findings) has checked a sample spread over the whole
// recording, not its beginning. Pure.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <vector>

#include "crashlab/states/crash_points.h"
#include "crashlab/states/crash_states.h"
#include "crashlab/index/recording_index.h"
#include "crashlab/judge/fast_path.h"
#include "crashlab/states/state_sample.h"
#include "crashlab/facts/fact.h"

namespace crashlab {

// From the recording's format (fscore/record/).
using crashlab::Fact;
using crashlab::FactError;
using crashlab::parse_fact;

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
  fscore::jbd2::RecoveryRules recovery;  // the recovering kernel's (fscore::jbd2::recovery_rules_of)
  std::uint64_t max_states = 0;  // unique states taken at most (a sample); 0: every one
};

// A state a check takes: its name, its ordinal among the unique states, its
// position among those taken.
struct SelectedState {
  StateKey key;
  std::uint64_t ordinal = 0;
  std::uint64_t position = 0;
};

class CrashImage;
class FactChecker;
struct FastPathMemo;

// One state as CrashChecker::walk hands it over: built in `image` (its
// `data` export the filesystem, `journal` its external journal if the
// recording has one), `oracle` holding the facts marked before its point;
// `memo`, the fast path's, belongs to this image (crashlab/judge/fast_path.h).
struct StateContext {
  const SelectedState& selected;
  const CrashState& state;
  const CrashPoint& point;
  CrashImage& image;
  std::uint8_t data = 0;
  std::optional<std::uint8_t> journal;
  const FactChecker& oracle;
  FastPathMemo& memo;
};

class CrashChecker {
 public:
  static constexpr std::uint64_t kShardBlock = 64;
  static constexpr unsigned kRounds = 7;

  // Counts every state, plans the sample and lists this shard's states.
  // Throws std::invalid_argument for a shard out of range, and what
  // facts_of throws.
  CrashChecker(const RecordingIndex& index, const CheckOptions& options);

  const std::vector<CrashPoint>& points() const { return points_; }
  const std::vector<std::optional<Fact>>& facts() const { return facts_; }
  const CheckOptions& options() const { return options_; }
  // Every state per strategy, counted without checking any.
  const Enumeration& count() const { return counted_; }
  // The unique states, and those taken, per point and strategy.
  const SamplePlan& plan() const { return plan_; }
  // The unique states taken per strategy.
  const std::array<std::uint64_t, kStrategies>& taken_by_strategy() const { return taken_by_strategy_; }
  // This shard's states, by position.
  const std::vector<SelectedState>& mine() const { return mine_; }
  // Whether the state at `position` is this shard's.
  bool is_mine(std::uint64_t position) const { return position / kShardBlock % options_.shards == options_.shard; }
  // The round (0 to kRounds - 1) in which the walk checks mine()[i].
  static unsigned round_of(std::size_t i);

  // Builds this shard's states round by round, in order within a round,
  // one at a time, calling `visit` with each until it returns false.
  // Returns how many it visited.
  std::uint64_t walk(const std::function<bool(StateContext&)>& visit) const;
  // Builds the states mine()[i] for each i of `which` (ascending) in one
  // pass, until `visit` returns false.
  void walk_some(const std::vector<std::size_t>& which, const std::function<bool(StateContext&)>& visit) const;
  // Builds `states` (ascending ordinals: find()'s) in one pass.
  void walk_states(const std::vector<SelectedState>& states, const std::function<void(StateContext&)>& visit) const;
  // The unique states with these ordinals, taken or not (nvj crash image).
  // Throws std::out_of_range naming an ordinal past the last.
  std::vector<SelectedState> find(const std::set<std::uint64_t>& ordinals) const;

 private:
  // Walks `states` (ascending positions) in one pass over a new image.
  template <typename Visit>
  bool walk_in_order(const std::vector<const SelectedState*>& states, Visit&& visit) const;

  const RecordingIndex& index_;
  CheckOptions options_;
  std::vector<CrashPoint> points_;
  std::vector<std::optional<Fact>> facts_;
  Enumeration counted_;
  SamplePlan plan_;
  std::array<std::uint64_t, kStrategies> taken_by_strategy_{};
  std::vector<SelectedState> mine_;
};

}  // namespace crashlab
