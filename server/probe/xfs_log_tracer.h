// SPDX-License-Identifier: BSD-3-Clause
// XfsLogTracer: the live view of an XFS log, for the JournalTracer (which
// finds the log, routes its writes here and holds the lock): a LogFollower
// over the log's bytes in the store, and what GET /journal, nvj journal top
// and the metrics show of it: records, operations and bytes, CRCs, head,
// tail and fill, the log write latency (a record's first write to the
// acknowledgement that made it durable) and the most recent records.
// docs/design.md, "The journal tracer", says how it is found.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/clock.h"
#include "fscore/block_io.h"
#include "fscore/xfs/log_follower.h"
#include "server/probe/latency_histogram.h"

namespace nvj {

struct XfsLogReport {
  std::uint64_t log_blocks = 0;  // basic blocks (512 bytes)
  bool synchronized = false;     // a whole record has been seen
  fscore::xfs::Lsn head, tail;
  double fill = 0;
  fscore::xfs::FollowerTotals totals;     // since start or the last reset
  LatencyHistogram::Summary write_latency;  // nanoseconds
  double bytes_per_second = 0;  // record bytes over the time since the first record (since the reset)
  std::vector<fscore::xfs::FollowedRecord> recent;  // oldest first
};

class XfsLogTracer final : fscore::xfs::FollowerEvents {
 public:
  static constexpr std::size_t kRecent = 64;

  // `log` holds the log from its byte 0, `log_blocks` long; the tracer
  // keeps it. `problem` hears each problem the follower finds.
  XfsLogTracer(std::unique_ptr<fscore::BlockSource> log, std::uint64_t log_blocks,
               std::function<void(const std::string&)> problem);

  void set_log_blocks(std::uint64_t log_blocks) { follower_.set_log_blocks(log_blocks); }
  void write(const fscore::xfs::LogWrite& w) { follower_.write(w); }
  void flush(Nanos arrived, Nanos completed) { follower_.flush(arrived, completed); }

  XfsLogReport report(Nanos now) const;
  void reset();

 private:
  void on_record(const fscore::xfs::FollowedRecord& r) override;
  void on_durable(const fscore::xfs::FollowedRecord& r) override;
  void on_problem(const std::string& p) override;

  std::unique_ptr<fscore::BlockSource> log_;
  fscore::xfs::LogFollower follower_;
  LatencyHistogram latency_;
  std::deque<fscore::xfs::FollowedRecord> recent_;
  std::function<void(const std::string&)> problem_;
  fscore::xfs::FollowerTotals baseline_;
  Nanos first_record_ = -1;  // the first record's first write since the reset
};

}  // namespace nvj
