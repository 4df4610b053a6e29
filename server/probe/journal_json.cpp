// SPDX-License-Identifier: BSD-3-Clause
#include "server/probe/journal_json.h"

#include <fmt/format.h>

namespace nvj {
namespace {

double us(Nanos ns) { return json_round(static_cast<double>(ns) / 1e3, 3); }

Json latency_json(const LatencyHistogram::Summary& l) {
  return {{"count", l.count},
          {"p50", us(static_cast<Nanos>(l.p50))},
          {"p99", us(static_cast<Nanos>(l.p99))},
          {"max", us(static_cast<Nanos>(l.max))},
          {"mean", l.count == 0 ? 0.0 : json_round(static_cast<double>(l.sum) / 1e3 / static_cast<double>(l.count), 3)}};
}

Json traffic_json(const TrafficTotals& t) {
  Json traffic = Json::object();
  for (std::size_t i = 0; i < kTrafficNames.size(); ++i)
    traffic[kTrafficNames[i]] = {{"bytes", t.bytes[i]}, {"writes", t.writes[i]}, {"device_time_us", us(t.device_time[i])}};
  return traffic;
}

Json xfs_journal_json(const JournalReport& r) {
  const XfsLogReport& x = *r.xfs;
  const auto& t = x.totals;
  Json recent = Json::array();
  for (const auto& record : x.recent) recent.push_back(xfs_record_json(record, r.since));
  return Json{
      {"tracing", true},
      {"format", "xfs"},
      {"placement", r.placement},
      {"format_known", true},
      {"block_size", fscore::xfs::kBasicBlock},
      {"log_blocks", x.log_blocks},
      {"synchronized", x.synchronized},
      {"head_lsn", fscore::xfs::to_string(x.head)},
      {"tail_lsn", fscore::xfs::to_string(x.tail)},
      {"fill_ratio", json_round(x.fill, 4)},
      {"records", t.records},
      {"operations", t.operations},
      {"log_bytes", t.record_bytes},
      {"log_bytes_per_second", json_round(x.bytes_per_second, 1)},
      {"written_bytes", t.log_bytes},
      {"log_writes", t.log_writes},
      {"flushes", t.flushes},
      {"checksum_errors", t.crc_bad},
      {"crc_absent", t.crc_absent},
      {"problems", t.problems},
      {"log_write_latency_us", latency_json(x.write_latency)},
      {"traffic", traffic_json(r.traffic)},
      {"recent", std::move(recent)},
      {"recent_problems", r.problems},
  };
}

}  // namespace

Json xfs_record_json(const fscore::xfs::FollowedRecord& r, Nanos epoch) {
  const auto& h = r.header;
  const bool durable = r.durable != 0;
  return Json{
      {"lsn", fscore::xfs::to_string(h.lsn)},
      {"tail_lsn", fscore::xfs::to_string(h.tail)},
      {"blocks", r.blocks},
      {"len", h.len},
      {"operations", h.operations},
      {"size", h.size},
      {"crc", fscore::xfs::to_string(r.crc)},
      {"writes", r.writes},
      {"fua", r.all_fua},
      {"first_write_us", us(r.first_write - epoch)},
      {"written_us", us(r.written - epoch)},
      {"durable_us", durable ? Json(us(r.durable - epoch)) : Json(nullptr)},
      {"latency_us", durable ? Json(us(r.latency())) : Json(nullptr)},
  };
}

Json transaction_json(const fscore::jbd2::Transaction& t, std::uint32_t block_size, Nanos epoch, double fill_after) {
  return Json{
      {"tid", t.tid},
      {"first_write_us", us(t.first_write - epoch)},
      {"commit_us", us(t.commit_arrived - epoch)},
      {"commit_done_us", us(t.commit_completed - epoch)},
      {"duration_us", us(t.duration())},
      {"log_start", t.first_log_block},
      {"log_blocks", t.log_blocks},
      {"descriptor_blocks", t.descriptor_blocks},
      {"logged_blocks", t.logged_blocks},
      {"metadata_blocks", t.metadata_blocks},
      {"data_blocks", t.data_blocks},
      {"escaped_blocks", t.escaped_blocks},
      {"revoke_blocks", t.revoke_blocks},
      {"revoked_blocks", t.revoked},
      {"bytes", t.bytes(block_size)},
      {"flushes", t.flushes},
      {"fua_writes", t.fua_writes},
      {"checksum_errors", t.checksum_errors},
      // The kernel's stamp, seconds and nanoseconds exactly as in the commit block.
      {"commit_time", fmt::format("{}.{:09d}", t.commit_seconds, t.commit_nanoseconds)},
      {"fill_after", json_round(fill_after, 4)},
  };
}

Json journal_json(const JournalTracer* tracer) {
  if (tracer == nullptr) return Json{{"tracing", false}};
  const JournalReport r = tracer->report();
  if (r.xfs) return xfs_journal_json(r);
  const auto& t = r.totals;
  Json recent = Json::array();
  for (const auto& c : r.recent) recent.push_back(transaction_json(c.t, r.block_size, r.since, c.fill_after));
  return Json{
      {"tracing", true},
      {"format", r.format},
      {"placement", r.placement},
      {"format_known", r.format_known},
      {"block_size", r.block_size},
      {"log_blocks", r.log_blocks},
      {"synchronized", r.synchronized},
      {"head", r.head},
      {"tail", r.tail},
      {"next_tid", r.next_tid},
      {"fill_ratio", json_round(r.fill, 4)},
      {"full_time_us", us(t.full_time)},
      {"longest_full_us", us(t.longest_full)},
      {"committed_transactions", t.transactions},
      {"logged_blocks", t.logged_blocks},
      {"log_blocks_written", t.log_blocks},
      {"descriptor_blocks", t.descriptor_blocks},
      {"metadata_blocks", t.metadata_blocks},
      {"data_blocks", t.data_blocks},
      {"escaped_blocks", t.escaped_blocks},
      {"revoke_blocks", t.revoke_blocks},
      {"revoked_blocks", t.revoked},
      {"fast_commit_blocks", t.fast_commit_blocks},
      {"superblock_writes", t.superblock_writes},
      {"checksum_errors", t.checksum_errors},
      {"problems", t.problems},
      {"log_bytes", t.log_bytes},
      {"commit_latency_us", latency_json(r.commit_latency)},
      {"traffic", traffic_json(r.traffic)},
      {"recent", std::move(recent)},
      {"recent_problems", r.problems},
  };
}

}  // namespace nvj
