// SPDX-License-Identifier: BSD-3-Clause
// WriteLog: the writes since the last completed flush, with the bytes each
// one replaced, so a power cut can take the store back to the last durable
// state and replay what survives under a CrashPolicy.
//
// Every write, zero and trim is recorded before it lands (begin), marked
// volatile or durable when acknowledged, and made durable by a flush that was
// sent after it was acknowledged (flush_begin / flush_end). Durable writes
// at the front of the log are dropped: nothing before them can be rolled
// back any more. If the log grows past its limit, its oldest volatile writes
// count as destaged by the drive (durable) so that memory stays bounded.
//
// The caller orders begin() and the store write under one lock, so the log's
// order is the order the bytes landed in.
#pragma once

#include <cstdint>
#include <deque>
#include <mutex>
#include <vector>

#include "server/powerloss/crash_policy.h"
#include "server/store/store.h"

namespace nvj {

class WriteLog {
 public:
  using Id = std::uint64_t;
  explicit WriteLog(std::uint64_t limit_bytes) : limit_(limit_bytes) {}

  // `data` is the new bytes, or nullptr for zero and trim (zeroes).
  Id begin(Store& store, std::uint64_t offset, std::uint32_t count, const void* data);
  void acknowledge(Id id, bool durable);
  // A flush arrives: the writes acknowledged so far are what it covers.
  std::uint64_t flush_begin() const;
  void flush_end(std::uint64_t covered);

  // Power cut: rolls the store back and replays the survivors. Empties the log.
  CrashReport cut(Store& store, const CrashPolicy& policy);

  // Forgets every write (the store went back to a base that has none of
  // them: CowStore::restore).
  void clear();

  std::size_t entries() const;
  std::uint64_t bytes() const;

 private:
  enum class State { in_flight, volatile_, durable };
  struct Entry {
    Id id;
    std::uint64_t offset;
    std::vector<char> before, after;
    State state;
    std::uint64_t acked;  // acknowledgement sequence, 0 while in flight
  };
  void prune();  // caller holds mutex_

  const std::uint64_t limit_;
  mutable std::mutex mutex_;
  std::deque<Entry> entries_;
  std::uint64_t bytes_ = 0;
  Id next_id_ = 1;
  std::uint64_t ack_seq_ = 0;
};

}  // namespace nvj
