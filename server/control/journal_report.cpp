// SPDX-License-Identifier: BSD-3-Clause
#include "server/control/journal_report.h"

#include <fmt/format.h>

#include <algorithm>

#include "server/control/prometheus_histogram.h"

namespace nvj {
namespace {

double us(std::uint64_t ns) { return static_cast<double>(ns) / 1e3; }
double ms(Nanos ns) { return static_cast<double>(ns) / 1e6; }

// One metric with a single series: its HELP and TYPE lines, then its value.
template <typename T>
void add_metric(std::string& out, const char* name, const char* type, const char* help, const T& value) {
  out += fmt::format("# HELP {} {}\n# TYPE {} {}\n{} {}\n", name, help, name, type, name, value);
}

std::string traffic_text(const TrafficTotals& traffic) {
  std::string out = fmt::format("\n{:<12} {:>14} {:>10} {:>16}\n", "data traffic", "bytes", "writes", "device time ms");
  for (std::size_t i = 0; i < kTrafficNames.size(); ++i)
    out += fmt::format("{:<12} {:>14} {:>10} {:>16.3f}\n", kTrafficNames[i], traffic.bytes[i], traffic.writes[i],
                       ms(traffic.device_time[i]));
  return out;
}

std::string xfs_text(const JournalReport& r) {
  const XfsLogReport& x = *r.xfs;
  const auto& t = x.totals;
  const auto& l = x.write_latency;
  std::string out = fmt::format(
      "xfs log ({}, {}): {} records, {} operations, {} bytes logged ({:.1f} KiB/s), {} CRC failures, {} without CRC\n"
      "log write latency: p50 {:.1f} us, p99 {:.1f} us, max {:.1f} us ({} records durable)\n"
      "head {}, tail {}, fill {:.1f}% of {} blocks\n",
      r.placement, x.synchronized ? "following the log" : "no whole record yet", t.records, t.operations,
      t.record_bytes, x.bytes_per_second / 1024, t.crc_bad, t.crc_absent, us(l.p50), us(l.p99), us(l.max), l.count,
      fscore::xfs::to_string(x.head), fscore::xfs::to_string(x.tail), x.fill * 100, x.log_blocks);
  out += traffic_text(r.traffic);
  out += fmt::format("\n{:>14} {:>14} {:>7} {:>7} {:>5} {:>6} {:>4} {:>12}\n", "lsn", "tail", "blocks", "ops", "crc",
                     "writes", "fua", "latency us");
  const std::size_t shown = std::min<std::size_t>(x.recent.size(), 15);
  for (std::size_t i = x.recent.size() - shown; i < x.recent.size(); ++i) {
    const auto& rec = x.recent[i];
    const std::string latency =
        rec.durable != 0 ? fmt::format("{:.1f}", static_cast<double>(rec.latency()) / 1e3) : std::string("-");
    out += fmt::format("{:>14} {:>14} {:>7} {:>7} {:>5} {:>6} {:>4} {:>12}\n", fscore::xfs::to_string(rec.header.lsn),
                       fscore::xfs::to_string(rec.header.tail), rec.blocks, rec.header.operations,
                       fscore::xfs::to_string(rec.crc), rec.writes, rec.all_fua ? "yes" : "no", latency);
  }
  for (const auto& p : r.problems) out += "problem: " + p + "\n";
  return out;
}

std::string xfs_prometheus(const JournalReport& r) {
  const XfsLogReport& x = *r.xfs;
  const auto& t = x.totals;
  std::string out;
  const auto metric = [&out](const char* name, const char* type, const char* help, auto value) {
    add_metric(out, name, type, help, value);
  };
  metric("nvjournal_xfs_log_records_total", "counter", "XFS log records written whole, decoded live.", t.records);
  metric("nvjournal_xfs_log_operations_total", "counter", "Operations those records carry.", t.operations);
  metric("nvjournal_xfs_log_bytes_total", "counter", "Bytes of those records: header and data blocks.",
         t.record_bytes);
  metric("nvjournal_journal_checksum_errors_total", "counter", "Log records whose CRC did not match.", t.crc_bad);
  metric("nvjournal_journal_fill_ratio", "gauge", "Log in use: tail to head, over the log's length.", x.fill);
  metric("nvjournal_xfs_log_head_cycle", "gauge", "The log head's cycle (where the next record goes).", x.head.cycle);
  metric("nvjournal_xfs_log_head_block", "gauge", "The log head's basic block.", x.head.block);
  metric("nvjournal_xfs_log_tail_cycle", "gauge", "The cycle of the tail the newest record carries.", x.tail.cycle);
  metric("nvjournal_xfs_log_tail_block", "gauge", "The basic block of that tail.", x.tail.block);
  out += prometheus_histogram_family("nvjournal_xfs_log_write_seconds",
                                     "A log record's first write to the acknowledgement that made it durable.");
  out += prometheus_histogram_series("nvjournal_xfs_log_write_seconds", "", x.write_latency);
  return out;
}

std::string traffic_prometheus(const TrafficTotals& traffic) {
  std::string out = "# HELP nvjournal_traffic_bytes_total Data export writes by class.\n"
                    "# TYPE nvjournal_traffic_bytes_total counter\n";
  for (std::size_t i = 0; i < kTrafficNames.size(); ++i)
    out += fmt::format("nvjournal_traffic_bytes_total{{class=\"{}\"}} {}\n", kTrafficNames[i], traffic.bytes[i]);
  out += "# HELP nvjournal_traffic_device_seconds_total Modelled device time of data export writes by class.\n"
         "# TYPE nvjournal_traffic_device_seconds_total counter\n";
  for (std::size_t i = 0; i < kTrafficNames.size(); ++i)
    out += fmt::format("nvjournal_traffic_device_seconds_total{{class=\"{}\"}} {:.9f}\n", kTrafficNames[i],
                       static_cast<double>(traffic.device_time[i]) / 1e9);
  return out;
}

}  // namespace

std::string journal_text(const Lab& lab) {
  const JournalTracer* tracer = lab.journal_tracer();
  if (tracer == nullptr) return "journal tracing is off (no journal, or journal-trace=off)\n";
  const JournalReport r = tracer->report();
  if (r.xfs) return xfs_text(r);
  const auto& t = r.totals;
  const auto& l = r.commit_latency;
  std::string out = fmt::format(
      "journal ({}, {}): {} transactions, {} blocks logged ({} metadata, {} data), {} revoked, {} log blocks\n"
      "commit latency: p50 {:.1f} us, p99 {:.1f} us, max {:.1f} us\n"
      "fill {:.1f}% (head {}, tail {}, next tid {}), full for {:.1f} ms (longest {:.1f} ms)\n",
      r.placement, r.format_known ? (r.synchronized ? "following the log" : "looking for the log") : "no journal yet",
      t.transactions, t.logged_blocks, t.metadata_blocks, t.data_blocks, t.revoked,
      t.log_blocks, us(l.p50), us(l.p99), us(l.max), r.fill * 100, r.head,
      r.tail, r.next_tid, ms(t.full_time), ms(t.longest_full));
  out += traffic_text(r.traffic);
  out += fmt::format("\n{:>10} {:>8} {:>8} {:>8} {:>8} {:>12} {:>8} {:>6}\n", "tid", "blocks", "logged", "meta",
                     "revoked", "commit us", "flushes", "fua");
  const std::size_t shown = std::min<std::size_t>(r.recent.size(), 15);
  for (std::size_t i = r.recent.size() - shown; i < r.recent.size(); ++i) {
    const auto& tx = r.recent[i].t;
    out += fmt::format("{:>10} {:>8} {:>8} {:>8} {:>8} {:>12.1f} {:>8} {:>6}\n", tx.tid, tx.log_blocks,
                       tx.logged_blocks, tx.metadata_blocks, tx.revoked, static_cast<double>(tx.duration()) / 1e3,
                       tx.flushes, tx.fua_writes);
  }
  for (const auto& p : r.problems) out += "problem: " + p + "\n";
  return out;
}

std::string journal_prometheus(const Lab& lab) {
  const JournalTracer* tracer = lab.journal_tracer();
  if (tracer == nullptr) return "";
  const JournalReport r = tracer->report();
  if (r.xfs) return xfs_prometheus(r) + traffic_prometheus(r.traffic);
  const auto& t = r.totals;
  std::string out;
  const auto metric = [&out](const char* name, const char* type, const char* help, auto value) {
    add_metric(out, name, type, help, value);
  };
  metric("nvjournal_journal_transactions_total", "counter", "jbd2 transactions committed, decoded live.",
         t.transactions);
  metric("nvjournal_journal_logged_blocks_total", "counter", "Blocks logged by those transactions.", t.logged_blocks);
  metric("nvjournal_journal_log_blocks_total", "counter",
         "Log blocks written by them: logged, descriptor, revoke and commit blocks.",
         t.log_blocks);
  metric("nvjournal_journal_revoked_blocks_total", "counter", "Revoke records.", t.revoked);
  metric("nvjournal_journal_checksum_errors_total", "counter", "Journal blocks whose checksum did not match.",
         t.checksum_errors);
  metric("nvjournal_journal_fill_ratio", "gauge", "Log in use: head to tail, over the log's length.", r.fill);
  metric("nvjournal_journal_full_seconds_total", "counter", "Time the log was at least 75% full.",
         static_cast<double>(t.full_time) / 1e9);
  out += prometheus_histogram_family("nvjournal_journal_commit_seconds",
                                     "First log write to the commit block's acknowledgement.");
  out += prometheus_histogram_series("nvjournal_journal_commit_seconds", "", r.commit_latency);
  out += traffic_prometheus(r.traffic);
  return out;
}

}  // namespace nvj
