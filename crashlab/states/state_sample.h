// SPDX-License-Identifier: BSD-3-Clause
// A sample of a recording's unique crash states, for a check with a budget
// smaller than the space (--max-states): spread over every crash point and
// strategy. The states fall in groups, one per (point, strategy); each
// group gets an equal share of the budget, a group with fewer states than
// its share all of them, and what they leave goes to the bigger groups
// (water-filling), so that every group is represented before any group has
// many. Inside a group the states taken are spread evenly over its
// enumeration order. Deterministic: the same recording, options and budget
// take the same states on every machine. Pure.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "crashlab/states/crash_states.h"

namespace crashlab {

// The group of a state: its point and strategy.
inline std::size_t sample_group(const StateKey& key) {
  return std::size_t{key.point} * kStrategies + static_cast<std::size_t>(key.strategy);
}

struct SamplePlan {
  std::uint64_t unique = 0;    // unique states in all
  std::uint64_t selected = 0;  // those taken
  std::vector<std::uint64_t> unique_by_group;  // by sample_group()
  std::vector<std::uint64_t> quota;            // taken of each group
  bool complete() const { return selected == unique; }
};

// Shares out `budget` states (0: no limit, every state) over groups holding
// `unique_by_group` unique states.
SamplePlan plan_sample(std::vector<std::uint64_t> unique_by_group, std::uint64_t budget);

// Told each unique state's group in the enumeration's order, says whether
// the plan takes it.
class SampleFilter {
 public:
  explicit SampleFilter(const SamplePlan& plan)
      : plan_(plan), seen_(plan.quota.size(), 0), taken_(plan.quota.size(), 0) {}
  bool take(std::size_t group);

 private:
  const SamplePlan& plan_;
  std::vector<std::uint64_t> seen_, taken_;
};

}  // namespace crashlab
