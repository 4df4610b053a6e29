// SPDX-License-Identifier: BSD-3-Clause
#include "server/probe/device_stats.h"

#include <algorithm>
#include <bit>

namespace nvj {

const char* to_string(IoOp op) {
  switch (op) {
    case IoOp::read: return "read";
    case IoOp::write: return "write";
    case IoOp::flush: return "flush";
    case IoOp::trim: return "trim";
    case IoOp::zero: return "zero";
  }
  return "?";
}

namespace {

std::uint64_t relaxed(const std::atomic<std::uint64_t>& c) { return c.load(std::memory_order_relaxed); }
void add(std::atomic<std::uint64_t>& c, std::uint64_t v) {
  if (v != 0) c.fetch_add(v, std::memory_order_relaxed);
}

}  // namespace

void DeviceStats::record(IoOp op, std::uint64_t bytes, std::uint64_t latency_ns, std::int64_t depth,
                         const IoTiming& timing, bool sequential, bool failed) {
  in_flight_.fetch_sub(1, std::memory_order_relaxed);
  OpCounters& o = ops_[static_cast<std::size_t>(op)];
  add(o.count, 1);
  add(o.bytes, bytes);
  if (failed) add(o.errors, 1);
  o.latency.record(latency_ns);
  add(depth_[static_cast<std::size_t>(std::clamp<std::int64_t>(depth, 0, kDepthBuckets - 1))], 1);
  if (timing.seeks > 0) {
    add(seeks_, timing.seeks);
    add(seek_cylinders_, timing.seek_distance);
    // A request with several seeks (a flush that destages) counts them at
    // their mean distance.
    const std::uint64_t mean = std::max<std::uint64_t>(1, timing.seek_distance / timing.seeks);
    const auto k = static_cast<int>(std::bit_width(mean - 1));  // 1 -> 0, 2 -> 1, 3..4 -> 2
    add(seek_distance_[static_cast<std::size_t>(std::min(k, kDistanceBuckets - 1))], timing.seeks);
  }
  if (op == IoOp::read || op == IoOp::write) {
    add(media_requests_, 1);
    if (sequential) add(sequential_, 1);
  }
  if (timing.cache_hit) add(cache_hits_, 1);
  add(queued_ns_, static_cast<std::uint64_t>(timing.queued));
  add(seek_ns_, static_cast<std::uint64_t>(timing.seek));
  add(rotation_ns_, static_cast<std::uint64_t>(timing.rotation));
  add(transfer_ns_, static_cast<std::uint64_t>(timing.transfer));
  add(destage_ns_, static_cast<std::uint64_t>(timing.destage));
  if (op == IoOp::flush) {
    if (timing.destage > 0) add(flushes_with_destage_, 1);
    add(flush_ns_, static_cast<std::uint64_t>(timing.destage + timing.queued));
  }
}

void DeviceStats::destaged(Nanos ns) { add(destaged_writes_ns_, static_cast<std::uint64_t>(ns)); }

void DeviceStats::reset() {
  for (auto& o : ops_) {
    o.count.store(0);
    o.bytes.store(0);
    o.errors.store(0);
    o.latency.reset();
  }
  for (auto& d : depth_) d.store(0);
  for (auto& d : seek_distance_) d.store(0);
  for (Counter* c : {&seeks_, &seek_cylinders_, &sequential_, &media_requests_, &cache_hits_, &flushes_with_destage_,
                     &queued_ns_, &seek_ns_, &rotation_ns_, &transfer_ns_, &destage_ns_, &flush_ns_,
                     &destaged_writes_ns_})
    c->store(0);
  late_.reset();
}

DeviceStats::Snapshot DeviceStats::snapshot() const {
  Snapshot s;
  for (std::size_t i = 0; i < ops_.size(); ++i) {
    s.ops[i].count = relaxed(ops_[i].count);
    s.ops[i].bytes = relaxed(ops_[i].bytes);
    s.ops[i].errors = relaxed(ops_[i].errors);
    s.ops[i].latency = ops_[i].latency.summary();
  }
  s.in_flight = in_flight_.load(std::memory_order_relaxed);
  for (std::size_t i = 0; i < depth_.size(); ++i) s.depth[i] = relaxed(depth_[i]);
  for (std::size_t i = 0; i < seek_distance_.size(); ++i) s.seek_distance[i] = relaxed(seek_distance_[i]);
  s.seeks = relaxed(seeks_);
  s.seek_cylinders = relaxed(seek_cylinders_);
  s.sequential = relaxed(sequential_);
  s.media_requests = relaxed(media_requests_);
  s.cache_hits = relaxed(cache_hits_);
  s.flushes_with_destage = relaxed(flushes_with_destage_);
  s.queued_ns = relaxed(queued_ns_);
  s.seek_ns = relaxed(seek_ns_);
  s.rotation_ns = relaxed(rotation_ns_);
  s.transfer_ns = relaxed(transfer_ns_);
  s.destage_ns = relaxed(destage_ns_);
  s.flush_ns = relaxed(flush_ns_);
  s.destaged_writes_ns = relaxed(destaged_writes_ns_);
  s.late = late_.summary();
  return s;
}

}  // namespace nvj
