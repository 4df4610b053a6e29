// SPDX-License-Identifier: BSD-3-Clause
// JournalTracer: decodes the journal live from the requests the devices
// serve (docs/design.md, "The journal tracer"): the external journal export's
// writes, or the internal journal region's on the data export, go through a
// JournalDecoder; the data export's other writes are classed by a
// TrafficClassifier. An XFS log is recognised too: on the journal export
// from the record headers written to it, inside the data export from the
// XFS superblock there (at the start, or when it is written); its writes
// then go to an XfsLogTracer instead. Keeps running totals, commit latencies, the most recent
// transactions and problems, and writes one JSON line per transaction to a
// trace file when asked.
//
// Observers run on serving threads. One thread at a time feeds the decoder
// and the classifier (a mutex); a thread that finds it taken leaves its
// request in an inbox and goes on serving, and whoever feeds takes the inbox
// up first, so requests are decoded in the order they were observed and no
// serving thread sleeps on another's decoding. Queued journal writes are
// read back from the store (they are still there: the log is a ring far
// longer than the queue).
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "fscore/jbd2/journal_decoder.h"
#include "fscore/jbd2/journal_log.h"
#include "common/clock.h"
#include "server/probe/ext4_layout.h"
#include "server/probe/latency_histogram.h"
#include "server/probe/request_inbox.h"
#include "server/probe/request_observer.h"
#include "server/probe/traffic_classifier.h"
#include "server/probe/xfs_log_tracer.h"
#include "server/store/store.h"

namespace nvj {

// A committed transaction and the log's fill once it had committed.
struct CommittedTransaction {
  fscore::jbd2::Transaction t;
  double fill_after = 0;
};

struct JournalReport {
  std::string placement;  // "external" or "internal"
  std::string format;     // "jbd2", "xfs", or "unknown" (no log recognised yet)
  std::optional<XfsLogReport> xfs;  // with format "xfs"; the jbd2 fields below are then unused
  bool format_known = false;
  std::uint32_t block_size = 0;
  std::uint32_t log_blocks = 0;  // the log's length
  bool synchronized = false;
  std::uint32_t head = 0, tail = 0, next_tid = 0;
  double fill = 0;
  fscore::jbd2::DecoderTotals totals;
  LatencyHistogram::Summary commit_latency;  // nanoseconds
  TrafficTotals traffic;
  std::vector<CommittedTransaction> recent;       // oldest first
  std::vector<std::string> problems;              // the most recent
  Nanos since = 0;  // the lab's time of the first request, for relative times
};

class JournalTracer final : public fscore::jbd2::DecoderEvents, public fscore::jbd2::LoggedKindOracle {
 public:
  static constexpr std::size_t kRecent = 64;
  static constexpr std::size_t kProblems = 16;

  // An external journal on `journal`; or (journal == nullptr) an internal one
  // at `region` (byte ranges of `data`, in log order). `trace_fd` >= 0: one
  // JSON line per transaction is appended there (the tracer closes it).
  JournalTracer(Store& data, Store* journal, std::vector<std::pair<std::uint64_t, std::uint64_t>> region,
                Clock& clock, Nanos epoch, int trace_fd);
  ~JournalTracer() override;
  JournalTracer(const JournalTracer&) = delete;
  JournalTracer& operator=(const JournalTracer&) = delete;

  RequestObserver& journal_observer() { return journal_observer_; }
  RequestObserver& data_observer() { return data_observer_; }

  JournalReport report() const;
  // Forgets totals, latencies, traffic and recent transactions (the decoder
  // keeps following the log).
  void reset();

  // LoggedKindOracle
  fscore::jbd2::LoggedKind classify(std::uint64_t target, std::span<const std::uint8_t> content) const override;

 private:
  class Observer final : public RequestObserver {
   public:
    Observer(JournalTracer& tracer, bool journal_device) : tracer_(tracer), journal_device_(journal_device) {}
    void observe(const ObservedRequest& r) override { tracer_.observe(r, journal_device_); }

   private:
    JournalTracer& tracer_;
    bool journal_device_;
  };
  // A BlockSource over the journal's bytes in log order.
  class LogSource final : public fscore::BlockSource {
   public:
    LogSource(Store& store, std::vector<std::pair<std::uint64_t, std::uint64_t>> region);
    std::uint64_t size() const override { return size_; }
    void read(std::uint64_t offset, std::span<std::uint8_t> bytes) const override;
    // Log offset of a store offset inside the region (the whole piece is).
    std::uint64_t log_offset(std::uint64_t store_offset) const;

   private:
    Store& store_;
    std::vector<std::pair<std::uint64_t, std::uint64_t>> region_;  // empty: identity
    std::vector<std::uint64_t> log_starts_;
    std::vector<std::size_t> by_store_;  // region indices sorted by store offset
    std::uint64_t size_ = 0;
  };

  void observe(const ObservedRequest& r, bool journal_device);
  // With mutex_ held. A reader (report) takes the inbox up too: the requests
  // in it have been served, so they belong in what it reads.
  void drain_locked() const;
  void apply_locked(const ObservedRequest& r, bool journal_device) const;
  // The request's bytes: its own, or read back from `store` when it was queued.
  std::span<const std::uint8_t> bytes_of(const ObservedRequest& r, const fscore::BlockSource& source,
                                         std::uint64_t at) const;
  void journal_write_locked(const ObservedRequest& r) const;
  void data_write_locked(const ObservedRequest& r) const;
  // The data export's XFS superblock, if it holds one: an internal log is
  // followed from now on, an external one's length is known.
  void read_xfs_superblock_locked() const;
  void start_xfs_locked(std::unique_ptr<fscore::BlockSource> log, std::uint64_t log_bytes, bool internal) const;
  void problem_locked(std::string what) const;
  void on_superblock(const fscore::jbd2::SuperblockUpdate& u) override;
  void on_logged_block(const fscore::jbd2::LoggedBlock& b) override;
  void on_commit(const fscore::jbd2::Transaction& t) override;
  void on_problem(const fscore::jbd2::ProblemReport& p) override;
  void write_trace_line(const CommittedTransaction& c);

  Store& data_;
  Store* const journal_;
  const bool internal_;
  Clock& clock_;
  const Nanos epoch_;
  const int trace_fd_;
  std::optional<Ext4Layout> layout_;
  LogSource source_;
  Observer journal_observer_{*this, true};
  Observer data_observer_{*this, false};

  static constexpr int kDrainPasses = 4;  // a feeder's turns at the inbox after its own request
  mutable RequestInbox inbox_;
  mutable std::vector<RequestInbox::Entry> draining_;
  mutable std::vector<std::uint8_t> fetched_;  // a queued journal write's bytes, read back
  mutable std::mutex mutex_;
  std::unique_ptr<fscore::jbd2::JournalDecoder> decoder_;
  std::unique_ptr<TrafficClassifier> classifier_;
  LatencyHistogram commit_latency_;
  std::deque<CommittedTransaction> recent_;
  mutable std::deque<std::string> problems_;
  // An XFS log, once found: on the journal export, or inside the data
  // export at [xfs_offset_, + xfs_length_).
  mutable std::unique_ptr<XfsLogTracer> xfs_;
  mutable bool xfs_internal_ = false;
  mutable std::uint64_t xfs_offset_ = 0, xfs_length_ = 0;
  mutable std::uint64_t xfs_external_bytes_ = 0;  // an external log's length, from the superblock (0: unknown)
  LogSource data_view_;                           // the data export as a BlockSource
  fscore::jbd2::DecoderTotals baseline_;  // totals at the last reset
  std::vector<std::uint8_t> restored_;
};

}  // namespace nvj
