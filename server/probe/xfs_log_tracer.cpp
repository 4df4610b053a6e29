// SPDX-License-Identifier: BSD-3-Clause
#include "server/probe/xfs_log_tracer.h"

#include <algorithm>

namespace nvj {

using fscore::xfs::FollowedRecord;
using fscore::xfs::FollowerTotals;

namespace {

FollowerTotals minus(FollowerTotals a, const FollowerTotals& b) {
  a.records -= b.records;
  a.operations -= b.operations;
  a.record_bytes -= b.record_bytes;
  a.crc_ok -= b.crc_ok;
  a.crc_bad -= b.crc_bad;
  a.crc_absent -= b.crc_absent;
  a.durable -= b.durable;
  a.log_writes -= b.log_writes;
  a.log_bytes -= b.log_bytes;
  a.flushes -= b.flushes;
  a.problems -= b.problems;
  return a;
}

}  // namespace

XfsLogTracer::XfsLogTracer(std::unique_ptr<fscore::BlockSource> log, std::uint64_t log_blocks,
                           std::function<void(const std::string&)> problem)
    : log_(std::move(log)), follower_(*log_, log_blocks, *this), problem_(std::move(problem)) {}

void XfsLogTracer::on_record(const FollowedRecord& r) {
  if (first_record_ < 0) first_record_ = r.first_write;
  if (recent_.size() == kRecent) recent_.pop_front();
  recent_.push_back(r);
}

void XfsLogTracer::on_durable(const FollowedRecord& r) {
  latency_.record(static_cast<std::uint64_t>(std::max<Nanos>(0, r.latency())));
  // The recent entry, if still there, learns when it became durable.
  for (auto it = recent_.rbegin(); it != recent_.rend(); ++it)
    if (it->header.lsn == r.header.lsn) {
      it->durable = r.durable;
      break;
    }
}

void XfsLogTracer::on_problem(const std::string& p) { problem_(p); }

XfsLogReport XfsLogTracer::report(Nanos now) const {
  XfsLogReport r;
  r.log_blocks = follower_.log_blocks();
  r.synchronized = follower_.synchronized();
  r.head = follower_.head();
  r.tail = follower_.tail();
  r.fill = follower_.fill();
  r.totals = minus(follower_.totals(), baseline_);
  r.write_latency = latency_.summary();
  if (first_record_ >= 0 && now > first_record_)
    r.bytes_per_second = static_cast<double>(r.totals.record_bytes) * 1e9 / static_cast<double>(now - first_record_);
  r.recent.assign(recent_.begin(), recent_.end());
  return r;
}

void XfsLogTracer::reset() {
  baseline_ = follower_.totals();
  latency_.reset();
  recent_.clear();
  first_record_ = -1;
}

}  // namespace nvj
