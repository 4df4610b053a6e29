// SPDX-License-Identifier: BSD-3-Clause
// LatencySummary: count, mean and percentiles of a set of durations, as the
// workload generators report their fsync latencies.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/json.h"

namespace nvj::workloads {

struct LatencySummary {
  std::uint64_t count = 0;
  double mean_us = 0, p50_us = 0, p90_us = 0, p99_us = 0, max_us = 0;

  // `nanos` is sorted in place.
  static LatencySummary of(std::vector<std::uint64_t>& nanos);
  Json json() const;         // {"count":...,"mean_us":...,...}
  std::string text() const;  // "n=500 mean 1.2 ms p50 ... max ..."
};

}  // namespace nvj::workloads
