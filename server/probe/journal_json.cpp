#include "server/probe/journal_json.h"

#include <fmt/format.h>

namespace nvj {
namespace {

double us(Nanos ns) { return json_round(static_cast<double>(ns) / 1e3, 3); }

}  // namespace

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
  const auto& t = r.totals;
  const auto& l = r.commit_latency;
  Json traffic = Json::object();
  for (std::size_t i = 0; i < kTrafficNames.size(); ++i)
    traffic[kTrafficNames[i]] = {{"bytes", r.traffic.bytes[i]},
                                 {"writes", r.traffic.writes[i]},
                                 {"device_time_us", us(r.traffic.device_time[i])}};
  Json recent = Json::array();
  for (const auto& c : r.recent) recent.push_back(transaction_json(c.t, r.block_size, r.since, c.fill_after));
  return Json{
      {"tracing", true},
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
      {"commit_latency_us",
       {{"count", l.count},
        {"p50", us(static_cast<Nanos>(l.p50))},
        {"p99", us(static_cast<Nanos>(l.p99))},
        {"max", us(static_cast<Nanos>(l.max))},
        {"mean", l.count == 0 ? 0.0 : json_round(static_cast<double>(l.sum) / 1e3 / static_cast<double>(l.count), 3)}}},
      {"traffic", std::move(traffic)},
      {"recent", std::move(recent)},
      {"recent_problems", r.problems},
  };
}

}  // namespace nvj
