// SPDX-License-Identifier: BSD-3-Clause
// DeviceStats: what one export did, per operation, recorded on every request
// without locks: counts, bytes, errors, latency (arrival to reply, as the
// client sees it), the queue depth met on arrival, the model's device time
// split into queueing, seek, rotation, transfer and destage, seeks and their
// distances, sequential requests, cache hits, and how late replies left
// against the model's completion time.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>

#include "server/model/timing_model.h"
#include "server/probe/latency_histogram.h"

namespace nvj {

constexpr std::array<IoOp, 5> kAllOps{IoOp::read, IoOp::write, IoOp::flush, IoOp::trim, IoOp::zero};
const char* to_string(IoOp op);

class DeviceStats {
 public:
  static constexpr int kDepthBuckets = 65;     // 0..63 requests ahead, and 64 or more
  static constexpr int kDistanceBuckets = 41;  // 0, then powers of two of cylinders

  // A request arrives: returns how many were already in flight.
  std::int64_t arrive() { return in_flight_.fetch_add(1, std::memory_order_relaxed); }
  void record(IoOp op, std::uint64_t bytes, std::uint64_t latency_ns, std::int64_t depth, const IoTiming& timing,
              bool sequential, bool failed);
  // A request the model timed was answered `ns` after the completion time
  // the model gave it (the clock's wait and the work after it).
  void late(std::uint64_t ns) { late_.record(ns); }
  // `ns` of device time went to writing this export's cached writes home
  // (at a flush, to make room, or while the drive was idle).
  void destaged(Nanos ns);
  void reset();

  struct Op {
    std::uint64_t count = 0, bytes = 0, errors = 0;
    LatencyHistogram::Summary latency;
  };
  struct Snapshot {
    std::array<Op, 5> ops;                 // in kAllOps order
    std::int64_t in_flight = 0;
    std::array<std::uint64_t, kDepthBuckets> depth{};
    std::uint64_t seeks = 0;           // arm movements for requests (a flush's destaging included)
    std::uint64_t seek_cylinders = 0;
    std::array<std::uint64_t, kDistanceBuckets> seek_distance{};  // [0] = 1 cylinder, [k] = up to 2^k
    std::uint64_t sequential = 0;
    std::uint64_t media_requests = 0;      // requests that reached the media (reads, writes)
    std::uint64_t cache_hits = 0;
    std::uint64_t flushes_with_destage = 0;
    // Device time in ns, from the model.
    std::uint64_t queued_ns = 0, seek_ns = 0, rotation_ns = 0, transfer_ns = 0, destage_ns = 0;
    std::uint64_t flush_ns = 0;  // device time of flushes
    std::uint64_t destaged_writes_ns = 0;  // destaging this export's writes, whenever it happened
    LatencyHistogram::Summary late;        // replies after the model's completion time, ns
  };
  Snapshot snapshot() const;

 private:
  struct OpCounters {
    std::atomic<std::uint64_t> count{0}, bytes{0}, errors{0};
    LatencyHistogram latency;
  };
  using Counter = std::atomic<std::uint64_t>;

  std::array<OpCounters, 5> ops_;
  std::atomic<std::int64_t> in_flight_{0};
  std::array<Counter, kDepthBuckets> depth_{};
  Counter seeks_{0}, seek_cylinders_{0};
  std::array<Counter, kDistanceBuckets> seek_distance_{};
  Counter sequential_{0}, media_requests_{0}, cache_hits_{0}, flushes_with_destage_{0};
  Counter queued_ns_{0}, seek_ns_{0}, rotation_ns_{0}, transfer_ns_{0}, destage_ns_{0}, flush_ns_{0};
  Counter destaged_writes_ns_{0};
  LatencyHistogram late_;
};

}  // namespace nvj
