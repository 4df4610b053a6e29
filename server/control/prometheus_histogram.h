// SPDX-License-Identifier: BSD-3-Clause
// A latency histogram in Prometheus' text format: the cumulative `le`
// buckets of LatencyHistogram::kBounds in seconds (1e-06 .. 10, then +Inf),
// the sum in seconds and the count. Shared by GET /metrics' request latency
// (stats_report) and journal commit time (journal_report), so every
// histogram of every server has the same `le` values and they aggregate.
#pragma once

#include <string>
#include <string_view>

#include "server/probe/latency_histogram.h"

namespace nvj {

// The # HELP and # TYPE lines of a histogram family.
std::string prometheus_histogram_family(std::string_view name, std::string_view help);

// One series: NAME_bucket{LABELS,le="..."} for every bound and +Inf,
// NAME_sum{LABELS} and NAME_count{LABELS}. `labels` is empty or
// `key="value",...` without braces.
std::string prometheus_histogram_series(std::string_view name, std::string_view labels,
                                        const LatencyHistogram::Summary& latency);

}  // namespace nvj
