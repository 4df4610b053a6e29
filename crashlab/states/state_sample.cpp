// SPDX-License-Identifier: BSD-3-Clause
#include "crashlab/states/state_sample.h"

#include <algorithm>
#include <numeric>

namespace crashlab {

namespace {

// The place in its group (of `n`) of the k-th of `q` states taken from it:
// the middle of the k-th of q equal stretches.
std::uint64_t rank_of(std::uint64_t k, std::uint64_t q, std::uint64_t n) {
  const std::uint64_t twice = 2 * q, odd = 2 * k + 1;
  return odd * (n / twice) + odd * (n % twice) / twice;
}

}  // namespace

SamplePlan plan_sample(std::vector<std::uint64_t> unique_by_group, std::uint64_t budget) {
  SamplePlan plan;
  plan.unique = std::accumulate(unique_by_group.begin(), unique_by_group.end(), std::uint64_t{0});
  plan.unique_by_group = std::move(unique_by_group);
  const auto& n = plan.unique_by_group;
  if (budget == 0 || plan.unique <= budget) {
    plan.quota = n;
    plan.selected = plan.unique;
    return plan;
  }
  // The highest level t with sum(min(n_g, t)) <= budget.
  const auto taken = [&](std::uint64_t t) {
    std::uint64_t sum = 0;
    for (const std::uint64_t c : n) sum += std::min(c, t);
    return sum;
  };
  std::uint64_t lo = 0, hi = *std::max_element(n.begin(), n.end());
  while (lo < hi) {
    const std::uint64_t mid = lo + (hi - lo + 1) / 2;
    if (taken(mid) <= budget)
      lo = mid;
    else
      hi = mid - 1;
  }
  plan.quota.resize(n.size());
  std::vector<std::size_t> bigger;  // groups with more than the level
  for (std::size_t g = 0; g < n.size(); ++g) {
    plan.quota[g] = std::min(n[g], lo);
    if (n[g] > lo) bigger.push_back(g);
  }
  // What is left over, one more each to groups spread evenly over the
  // bigger ones (fewer than them, or the level would be higher).
  const std::uint64_t rest = budget - taken(lo);
  for (std::uint64_t i = 0; i < rest; ++i) ++plan.quota[bigger[rank_of(i, rest, bigger.size())]];
  plan.selected = budget;
  return plan;
}

bool SampleFilter::take(std::size_t group) {
  const std::uint64_t rank = seen_[group]++;
  const std::uint64_t k = taken_[group];
  const std::uint64_t q = plan_.quota[group];
  if (k >= q || rank != rank_of(k, q, plan_.unique_by_group[group])) return false;
  ++taken_[group];
  return true;
}

}  // namespace crashlab
