// SPDX-License-Identifier: BSD-3-Clause
#include "server/control/prometheus_histogram.h"

#include <fmt/format.h>

#include <array>
#include <cstdint>
#include <iterator>

namespace nvj {
namespace {

// "1e-06", "2e-06", "5e-06", "1e-05", ..., "0.0001", ..., "10": the shortest
// text of each bound in seconds, as Prometheus' own client libraries write
// `le` (the same bound must be the same text on every server).
const std::array<std::string, LatencyHistogram::kBounds.size()>& le_texts() {
  static const auto texts = [] {
    std::array<std::string, LatencyHistogram::kBounds.size()> out;
    for (std::size_t i = 0; i < out.size(); ++i)
      out[i] = fmt::format("{}", static_cast<double>(LatencyHistogram::kBounds[i]) / 1e9);
    return out;
  }();
  return texts;
}

}  // namespace

std::string prometheus_histogram_family(std::string_view name, std::string_view help) {
  return fmt::format("# HELP {} {}\n# TYPE {} histogram\n", name, help, name);
}

std::string prometheus_histogram_series(std::string_view name, std::string_view labels,
                                        const LatencyHistogram::Summary& latency) {
  // Appended piece by piece (a scrape writes some 300 of these lines): the
  // line's head once, the counts with fmt::format_int.
  const std::string bucket = fmt::format("{}_bucket{{{}{}le=\"", name, labels, labels.empty() ? "" : ",");
  std::string out;
  out.reserve((bucket.size() + 20) * (latency.at_most.size() + 1) + 2 * (name.size() + labels.size() + 40));
  auto line = [&](std::string_view le, std::uint64_t count) {
    out += bucket;
    out += le;
    out += "\"} ";
    out += fmt::format_int(count).c_str();
    out += '\n';
  };
  for (std::size_t i = 0; i < latency.at_most.size(); ++i) line(le_texts()[i], latency.at_most[i]);
  line("+Inf", latency.count);
  const std::string braces = labels.empty() ? "" : fmt::format("{{{}}}", labels);
  fmt::format_to(std::back_inserter(out), "{}_sum{} {:.9f}\n", name, braces, static_cast<double>(latency.sum) / 1e9);
  fmt::format_to(std::back_inserter(out), "{}_count{} {}\n", name, braces, latency.count);
  return out;
}

}  // namespace nvj
