// SPDX-License-Identifier: BSD-3-Clause
#include "crashlab/judge/state_walk.h"

#include <bit>
#include <stdexcept>
#include <string>

#include "crashlab/states/crash_image.h"
#include "crashlab/facts/fact_checker.h"

namespace crashlab {

std::vector<std::optional<Fact>> facts_of(const RecordingIndex& index) {
  std::vector<std::optional<Fact>> facts;
  facts.reserve(index.marks().size());
  for (std::size_t i = 0; i < index.marks().size(); ++i) {
    try {
      facts.push_back(parse_fact(index.marks()[i].label));
    } catch (const FactError& e) {
      throw std::runtime_error("mark " + std::to_string(i + 1) + " (frame " +
                               std::to_string(index.marks()[i].sequence) + "): " + e.what());
    }
  }
  return facts;
}

CrashChecker::CrashChecker(const RecordingIndex& index, const CheckOptions& options)
    : index_(index), options_(options), points_(crash_points(index, options.points)), facts_(facts_of(index)) {
  if (options.shards == 0 || options.shard >= options.shards)
    throw std::invalid_argument("shard " + std::to_string(options.shard) + " of " + std::to_string(options.shards) +
                                ": the index must be below the count");
  // Counted once to plan the sample, then again to take it.
  std::vector<std::uint64_t> unique_by_group(points_.size() * kStrategies, 0);
  counted_ = enumerate_crash_states(index, points_, options.strategies, [&](const CrashState& s) {
    if (s.first) ++unique_by_group[sample_group(s.key)];
  });
  plan_ = plan_sample(std::move(unique_by_group), options.max_states);
  SampleFilter filter(plan_);
  std::uint64_t ordinal = 0, position = 0;
  enumerate_crash_states(index, points_, options.strategies, [&](const CrashState& s) {
    if (!s.first) return;
    const std::uint64_t o = ordinal++;
    if (!filter.take(sample_group(s.key))) return;
    ++taken_by_strategy_[static_cast<std::size_t>(s.strategy)];
    const std::uint64_t p = position++;
    if (is_mine(p)) mine_.push_back({s.key, o, p});
  });
}

unsigned CrashChecker::round_of(std::size_t i) {
  const std::size_t within = i % kShardBlock;
  if (within == 0) return 0;
  return kRounds - 1 - static_cast<unsigned>(std::countr_zero(within));  // 32: 1, 16 and 48: 2, ..., odd: 6
}

template <typename Visit>
bool CrashChecker::walk_in_order(const std::vector<const SelectedState*>& states, Visit&& visit) const {
  CrashImage image(index_);
  FastPathMemo memo;  // names that hold for this image only
  const std::uint8_t data = image.find("data").value_or(0);
  const std::optional<std::uint8_t> journal = image.find("journal");
  FactChecker oracle;
  std::size_t next_mark = 0;  // facts folded into the oracle: those of marks before it
  for (const SelectedState* selected : states) {
    const CrashState state = state_of(index_, points_, options_.strategies, selected->key);
    const CrashPoint& point = points_[state.point];
    image.advance(point.sequence);
    const std::size_t marks = point.last_mark == kNoMark ? 0 : point.last_mark + 1;
    for (; next_mark < marks; ++next_mark)
      if (facts_[next_mark]) oracle.add(*facts_[next_mark]);
    image.set_state(state.kept, state.torn);
    StateContext context{*selected, state, point, image, data, journal, oracle, memo};
    if (!visit(context)) return false;
  }
  return true;
}

std::uint64_t CrashChecker::walk(const std::function<bool(StateContext&)>& visit) const {
  std::uint64_t visited = 0;
  for (unsigned round = 0; round < kRounds; ++round) {
    std::vector<const SelectedState*> states;
    for (std::size_t i = 0; i < mine_.size(); ++i)
      if (round_of(i) == round) states.push_back(&mine_[i]);
    if (states.empty()) continue;
    const bool go_on = walk_in_order(states, [&](StateContext& c) {
      ++visited;
      return visit(c);
    });
    if (!go_on) break;
  }
  return visited;
}

void CrashChecker::walk_some(const std::vector<std::size_t>& which, const std::function<bool(StateContext&)>& visit) const {
  std::vector<const SelectedState*> states;
  for (const std::size_t i : which) states.push_back(&mine_.at(i));
  walk_in_order(states, visit);
}

void CrashChecker::walk_states(const std::vector<SelectedState>& states,
                               const std::function<void(StateContext&)>& visit) const {
  std::vector<const SelectedState*> list;
  for (const SelectedState& s : states) list.push_back(&s);
  walk_in_order(list, [&](StateContext& c) {
    visit(c);
    return true;
  });
}

std::vector<SelectedState> CrashChecker::find(const std::set<std::uint64_t>& ordinals) const {
  std::vector<SelectedState> found;
  if (ordinals.empty()) return found;
  if (*ordinals.rbegin() >= plan_.unique)
    throw std::out_of_range("no state " + std::to_string(*ordinals.rbegin()) + ": with these options the recording has " +
                            std::to_string(plan_.unique) + " unique states (0 to " +
                            std::to_string(plan_.unique - 1) + ")");
  std::uint64_t ordinal = 0;
  enumerate_crash_states(index_, points_, options_.strategies, [&](const CrashState& s) {
    if (!s.first) return;
    const std::uint64_t o = ordinal++;
    if (ordinals.count(o) != 0) found.push_back({s.key, o, o});
  });
  return found;
}

}  // namespace crashlab
