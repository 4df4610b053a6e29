#include "server/control/prometheus_histogram.h"

#include <fmt/format.h>

#include <array>

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
  const std::string sep = labels.empty() ? "" : ",";
  std::string out;
  for (std::size_t i = 0; i < latency.at_most.size(); ++i)
    out += fmt::format("{}_bucket{{{}{}le=\"{}\"}} {}\n", name, labels, sep, le_texts()[i], latency.at_most[i]);
  out += fmt::format("{}_bucket{{{}{}le=\"+Inf\"}} {}\n", name, labels, sep, latency.count);
  const std::string braces = labels.empty() ? "" : fmt::format("{{{}}}", labels);
  out += fmt::format("{}_sum{} {:.9f}\n", name, braces, static_cast<double>(latency.sum) / 1e9);
  out += fmt::format("{}_count{} {}\n", name, braces, latency.count);
  return out;
}

}  // namespace nvj
