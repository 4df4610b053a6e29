// SPDX-License-Identifier: BSD-3-Clause
// Percentiles of a set of samples, by one rule everywhere: the nearest rank.
// The p-th percentile of n sorted samples is the sample at 1-based rank
// ceil(p/100 * n) (at least 1): the smallest sample with at least p% of
// the samples at or below it. The workloads' exact summaries, nvj bench's
// and the server's histograms all use it.
#pragma once

#include <cstdint>
#include <span>

namespace nvj {

// The 1-based rank of the `fraction` (0..1) percentile among `count`
// samples; 0 when count is 0.
std::uint64_t nearest_rank(double fraction, std::uint64_t count);

// The `fraction` (0..1) percentile of `sorted` (ascending); 0 when empty.
std::uint64_t percentile(std::span<const std::uint64_t> sorted, double fraction);

}  // namespace nvj
