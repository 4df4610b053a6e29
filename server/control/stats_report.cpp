// SPDX-License-Identifier: BSD-3-Clause
#include "server/control/stats_report.h"

#include <fmt/format.h>

#include <array>
#include <vector>

#include "common/size.h"
#include "server/control/prometheus_histogram.h"

namespace nvj {
namespace {

double micros(std::uint64_t ns) { return static_cast<double>(ns) / 1e3; }
double seconds(std::uint64_t ns) { return static_cast<double>(ns) / 1e9; }

double fraction(std::uint64_t part, std::uint64_t whole) {
  return whole == 0 ? 0.0 : static_cast<double>(part) / static_cast<double>(whole);
}

double us_json(std::uint64_t ns) { return json_round(micros(ns), 3); }

Json request_latency_json(const LatencyHistogram::Summary& l) {
  return {{"p50", us_json(l.p50)},
          {"p90", us_json(l.p90)},
          {"p99", us_json(l.p99)},
          {"p999", us_json(l.p999)},
          {"max", us_json(l.max)},
          {"mean", l.count == 0 ? 0.0 : json_round(micros(l.sum) / static_cast<double>(l.count), 3)}};
}

// One region's counters, added to `out`.
void add_counters(Json& out, const DeviceStats::Snapshot& s) {
  Json ops = Json::object();
  for (std::size_t i = 0; i < kAllOps.size(); ++i) {
    const auto& o = s.ops[i];
    ops[to_string(kAllOps[i])] = {
        {"count", o.count}, {"bytes", o.bytes}, {"errors", o.errors}, {"latency_us", request_latency_json(o.latency)}};
  }
  // Requests already in flight on arrival, by count ("64+": that many or more);
  // seek distances by powers of two of cylinders. Only the buckets that were met.
  Json depth = Json::object();
  for (std::size_t i = 0; i < s.depth.size(); ++i)
    if (s.depth[i] != 0) depth[std::to_string(i) + (i + 1 == s.depth.size() ? "+" : "")] = s.depth[i];
  Json distance = Json::object();
  for (std::size_t k = 0; k < s.seek_distance.size(); ++k)
    if (s.seek_distance[k] != 0) distance[std::to_string(std::uint64_t{1} << k)] = s.seek_distance[k];
  out["in_flight"] = s.in_flight;
  out["ops"] = std::move(ops);
  out["queue_depth"] = std::move(depth);
  out["device_time_us"] = {{"queued", us_json(s.queued_ns)},
                           {"seek", us_json(s.seek_ns)},
                           {"rotation", us_json(s.rotation_ns)},
                           {"transfer", us_json(s.transfer_ns)},
                           {"destage", us_json(s.destage_ns)}};
  out["seeks"] = {{"count", s.seeks}, {"cylinders", s.seek_cylinders}, {"distance", std::move(distance)}};
  out["sequential_fraction"] = json_round(fraction(s.sequential, s.media_requests), 4);
  out["cache_hits"] = s.cache_hits;
  out["flushes_with_destage"] = s.flushes_with_destage;
  out["flush_device_time_us"] = us_json(s.flush_ns);
  out["destaged_writes_us"] = us_json(s.destaged_writes_ns);
  Json late = request_latency_json(s.late);
  late["count"] = s.late.count;
  out["late_us"] = std::move(late);
}

// The spin windows' names, by MonotonicClock::length_class.
constexpr std::array<const char*, MonotonicClock::kLengthClasses> kWaitLengths{"<1ms", "<4ms", "<16ms", ">=16ms"};

Json clock_json(const MonotonicClock::Stats& c) {
  Json windows = Json::object();
  for (std::size_t i = 0; i < c.windows.size(); ++i)
    windows[kWaitLengths[i]] = us_json(static_cast<std::uint64_t>(c.windows[i]));
  return {{"waits", c.waits},
          {"slept", c.slept},
          {"woke_late", c.woke_late},
          {"shared", c.shared},
          {"behind", c.behind},
          {"spun_s", json_round(seconds(static_cast<std::uint64_t>(c.spun)), 6)},
          {"spin_window_us", std::move(windows)}};
}

// An export; its regions (an internal journal) under "regions", each with
// its own model, durability, size and counters. The export's own counters
// are for the rest of its address space.
Json export_json(const Device& d) {
  Json regions = Json::object();
  for (std::size_t i = 0; i < d.region_count(); ++i) {
    const auto r = d.region(i);
    Json region{{"model", d.region_model_description(i)}, {"durability", to_string(r.durability)}, {"size", r.bytes}};
    add_counters(region, r.stats.snapshot());
    regions[r.name] = std::move(region);
  }
  Json out{{"description", d.describe()},
           {"model", d.model_description()},
           {"durability", to_string(d.durability())},
           {"powered", d.powered()},
           {"size", d.size()}};
  const DeviceTraits& t = d.traits();
  out["to_host"] = Json{{"rotational", t.rotational},
                        {"write_cache", t.write_back ? "write-back" : "write-through"},
                        {"trim", t.trim},
                        {"zero", t.zero},
                        {"logical_sector", t.logical_sector},
                        {"physical_sector", t.physical_sector}};
  add_counters(out, d.stats().snapshot());
  out["regions"] = std::move(regions);
  return out;
}

// Every region of every device, named "data" and "data/journal".
struct NamedStats {
  std::string name;
  std::string model;
  DeviceStats::Snapshot s;
};
std::vector<NamedStats> all_stats(const Lab& lab) {
  std::vector<NamedStats> rows;
  for (const auto& d : lab.devices()) {
    rows.push_back({d->name(), d->model_description(), d->stats().snapshot()});
    for (std::size_t i = 0; i < d->region_count(); ++i)
      rows.push_back({d->name() + "/" + d->region(i).name, d->region_model_description(i),
                      d->region(i).stats.snapshot()});
  }
  return rows;
}

}  // namespace

Json stats_json(const Lab& lab) {
  Json exports = Json::object();
  for (const auto& d : lab.devices()) exports[d->name()] = export_json(*d);
  Json marks = Json::array();
  for (const auto& m : lab.marks())
    marks.push_back({{"t_s", json_round(seconds(static_cast<std::uint64_t>(m.at)), 6)}, {"label", m.label}});
  return {{"uptime_s", json_round(seconds(static_cast<std::uint64_t>(lab.uptime())), 3)},
          {"exports", std::move(exports)},
          {"clock", clock_json(lab.clock_stats())},
          {"marks", std::move(marks)}};
}

std::string stats_prometheus(const Lab& lab) {
  std::string out;
  auto family = [&](const char* name, const char* type, const char* help) {
    out += fmt::format("# HELP {} {}\n# TYPE {} {}\n", name, help, name, type);
  };
  const std::vector<NamedStats> rows = all_stats(lab);

  auto per_op_counter = [&](const char* name, const char* help, std::uint64_t DeviceStats::Op::*field) {
    family(name, "counter", help);
    for (const auto& r : rows)
      for (std::size_t i = 0; i < kAllOps.size(); ++i)
        out += fmt::format("{}{{export=\"{}\",op=\"{}\"}} {}\n", name, r.name, to_string(kAllOps[i]),
                           r.s.ops[i].*field);
  };
  per_op_counter("nvjournal_requests_total", "Requests served, by export and operation.", &DeviceStats::Op::count);
  per_op_counter("nvjournal_bytes_total", "Bytes moved, by export and operation.", &DeviceStats::Op::bytes);
  per_op_counter("nvjournal_errors_total", "Requests that failed, by export and operation.", &DeviceStats::Op::errors);
  // Histograms, not summaries: their buckets add up across exports and
  // servers, and histogram_quantile() over rate() gives a recent quantile
  // where a summary's would cover everything since the start.
  out += prometheus_histogram_family("nvjournal_latency_seconds", "Arrival to reply, as the client sees it.");
  for (const auto& r : rows)
    for (std::size_t i = 0; i < kAllOps.size(); ++i)
      out += prometheus_histogram_series("nvjournal_latency_seconds",
                                         fmt::format("export=\"{}\",op=\"{}\"", r.name, to_string(kAllOps[i])),
                                         r.s.ops[i].latency);
  out += prometheus_histogram_family("nvjournal_late_seconds",
                                     "Replies to requests the model timed, by how long after the model's completion "
                                     "time they left.");
  for (const auto& r : rows)
    out += prometheus_histogram_series("nvjournal_late_seconds", fmt::format("export=\"{}\"", r.name), r.s.late);
  family("nvjournal_in_flight", "gauge", "Requests being served now.");
  for (const auto& r : rows) out += fmt::format("nvjournal_in_flight{{export=\"{}\"}} {}\n", r.name, r.s.in_flight);
  family("nvjournal_device_seconds_total", "counter", "Modelled device time, by part.");
  for (const auto& r : rows)
    for (const auto& [part, ns] : {std::pair{"queued", r.s.queued_ns}, {"seek", r.s.seek_ns},
                                   {"rotation", r.s.rotation_ns}, {"transfer", r.s.transfer_ns},
                                   {"destage", r.s.destage_ns}})
      out += fmt::format("nvjournal_device_seconds_total{{export=\"{}\",part=\"{}\"}} {:.9f}\n", r.name, part,
                         seconds(ns));
  family("nvjournal_destaged_writes_seconds_total", "counter",
         "Device time spent writing the export's cached writes home (flushes, full cache, idle).");
  for (const auto& r : rows)
    out += fmt::format("nvjournal_destaged_writes_seconds_total{{export=\"{}\"}} {:.9f}\n", r.name,
                       seconds(r.s.destaged_writes_ns));
  auto per_export_counter = [&](const char* name, const char* help, std::uint64_t DeviceStats::Snapshot::*field) {
    family(name, "counter", help);
    for (const auto& r : rows) out += fmt::format("{}{{export=\"{}\"}} {}\n", name, r.name, r.s.*field);
  };
  per_export_counter("nvjournal_seeks_total", "Arm movements (hdd).", &DeviceStats::Snapshot::seeks);
  per_export_counter("nvjournal_cache_hits_total", "Requests served by the drive's cache.",
                     &DeviceStats::Snapshot::cache_hits);
  per_export_counter("nvjournal_sequential_total", "Reads and writes that began where the previous one ended.",
                     &DeviceStats::Snapshot::sequential);
  const MonotonicClock::Stats c = lab.clock_stats();
  family("nvjournal_clock_waits_total", "counter",
         "Waits for a completion time, by what they did: all, slept first, woke past the deadline, slept "
         "because another wait was spinning; and requests already past theirs (behind), not counted in all.");
  for (const auto& [how, n] : {std::pair{"all", c.waits}, {"slept", c.slept}, {"woke_late", c.woke_late},
                               {"shared", c.shared}, {"behind", c.behind}})
    out += fmt::format("nvjournal_clock_waits_total{{how=\"{}\"}} {}\n", how, n);
  family("nvjournal_clock_spin_seconds_total", "counter", "Time the waits spent spinning: CPU time of one core.");
  out += fmt::format("nvjournal_clock_spin_seconds_total {:.9f}\n", seconds(static_cast<std::uint64_t>(c.spun)));
  return out;
}

std::string stats_text(const Lab& lab) {
  // One snapshot per region: the table and the lines under it are one moment.
  const std::vector<NamedStats> rows = all_stats(lab);
  std::string out = fmt::format("{:<12} {:<6} {:>10} {:>12} {:>10} {:>10} {:>10} {:>10}\n", "export", "op", "count",
                                "bytes", "p50 us", "p99 us", "max us", "errors");
  for (const auto& r : rows) {
    for (std::size_t i = 0; i < kAllOps.size(); ++i) {
      const auto& o = r.s.ops[i];
      if (o.count == 0) continue;
      out += fmt::format("{:<12} {:<6} {:>10} {:>12} {:>10.1f} {:>10.1f} {:>10.1f} {:>10}\n", r.name,
                         to_string(kAllOps[i]), o.count, o.bytes, micros(o.latency.p50), micros(o.latency.p99),
                         micros(o.latency.max), o.errors);
    }
  }
  for (const auto& r : rows) {
    const auto& s = r.s;
    out += fmt::format("{}: {}\n", r.name, r.model);
    out += fmt::format("  device time: queued {:.3f} s, seek {:.3f} s, rotation {:.3f} s, transfer {:.3f} s, destage "
                       "{:.3f} s\n",
                       seconds(s.queued_ns), seconds(s.seek_ns), seconds(s.rotation_ns), seconds(s.transfer_ns),
                       seconds(s.destage_ns));
    out += fmt::format("  seeks {} (mean {:.0f} cylinders), sequential {:.1f}%, cache hits {}, flushes that "
                       "destaged {}, destaging its writes {:.3f} s\n",
                       s.seeks, s.seeks == 0 ? 0.0 : static_cast<double>(s.seek_cylinders) / static_cast<double>(s.seeks),
                       100 * fraction(s.sequential, s.media_requests), s.cache_hits, s.flushes_with_destage,
                       seconds(s.destaged_writes_ns));
    if (s.late.count > 0)
      out += fmt::format("  {} replies after the model's time: p50 {:.2f} us, p99 {:.2f} us, max {:.1f} us late\n",
                         s.late.count, micros(s.late.p50), micros(s.late.p99), micros(s.late.max));
  }
  const MonotonicClock::Stats c = lab.clock_stats();
  if (c.waits > 0 || c.behind > 0)
    out += fmt::format("clock: {} waits, {} slept first, {} woke past the deadline, {} slept while another spun; "
                       "spun {:.3f} s of CPU; {} requests already past their completion time\n",
                       c.waits, c.slept, c.woke_late, c.shared, seconds(static_cast<std::uint64_t>(c.spun)), c.behind);
  return out;
}

}  // namespace nvj
