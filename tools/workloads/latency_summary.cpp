// SPDX-License-Identifier: BSD-3-Clause
#include "tools/workloads/latency_summary.h"

#include "common/percentile.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>

namespace nvj::workloads {
namespace {

std::string duration(double us) {
  char buf[32];
  if (us >= 1e6) std::snprintf(buf, sizeof buf, "%.2f s", us / 1e6);
  else if (us >= 1e3) std::snprintf(buf, sizeof buf, "%.2f ms", us / 1e3);
  else std::snprintf(buf, sizeof buf, "%.1f us", us);
  return buf;
}

}  // namespace

LatencySummary LatencySummary::of(std::vector<std::uint64_t>& nanos) {
  LatencySummary s;
  if (nanos.empty()) return s;
  std::sort(nanos.begin(), nanos.end());
  s.count = nanos.size();
  const auto us = [](std::uint64_t ns) { return static_cast<double>(ns) / 1000.0; };
  s.mean_us = static_cast<double>(std::accumulate(nanos.begin(), nanos.end(), 0.0L) /
                                  static_cast<long double>(nanos.size())) /
              1000.0;
  s.p50_us = us(percentile(nanos, 0.50));
  s.p90_us = us(percentile(nanos, 0.90));
  s.p99_us = us(percentile(nanos, 0.99));
  s.max_us = static_cast<double>(nanos.back()) / 1000.0;
  return s;
}

Json LatencySummary::json() const {
  return Json{{"count", count},
              {"mean_us", json_round(mean_us, 1)},
              {"p50_us", json_round(p50_us, 1)},
              {"p90_us", json_round(p90_us, 1)},
              {"p99_us", json_round(p99_us, 1)},
              {"max_us", json_round(max_us, 1)}};
}

std::string LatencySummary::text() const {
  if (count == 0) return "none";
  return std::to_string(count) + " calls, mean " + duration(mean_us) + ", p50 " + duration(p50_us) + ", p90 " +
         duration(p90_us) + ", p99 " + duration(p99_us) + ", max " + duration(max_us);
}

}  // namespace nvj::workloads
