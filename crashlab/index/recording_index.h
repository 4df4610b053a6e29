// SPDX-License-Identifier: BSD-3-Clause
// RecordingIndex: a recording (recording_format.h) read once, every frame
// checked, into what the crash lab works from: the starting contents, every
// change with where its bytes are in the recording, when it was
// acknowledged (and whether durable then) or failed, every flush with the
// changes it covers and when it completed, and every mark. Positions are
// frame sequence numbers, so "before" and "after" are the recording's order.
// The bytes stay where they are: the index points into the recording's
// bytes, which must outlive it. Pure.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "fscore/record/frame_reader.h"

namespace crashlab {

// From the recording's format (fscore/record/).
using fscore::record::Frame;
using fscore::record::FrameKind;
using fscore::record::FrameReader;
using fscore::record::ExportInfo;
using fscore::record::RecordingError;

inline constexpr std::uint64_t kNever = ~std::uint64_t{0};

struct IndexedChange {
  std::uint64_t id = 0;
  std::uint64_t sequence = 0;  // its frame
  FrameKind kind = FrameKind::write;  // write, zero or trim
  std::uint8_t device = 0;
  bool fua = false;
  std::uint64_t offset = 0;
  std::uint64_t length = 0;
  std::span<const std::uint8_t> data;  // a write's bytes
  std::uint64_t acked = kNever;        // its ack frame's sequence
  bool durable_on_ack = false;         // FUA, or a region durable on acknowledgement
  std::uint64_t failed = kNever;       // its failed frame's sequence
  // When it became durable: its ack if durable on acknowledgement, else the
  // first flush_done of its export whose flush covers it; kNever if never.
  std::uint64_t durable = kNever;
};

struct IndexedFlush {
  std::uint64_t id = 0;
  std::uint8_t device = 0;
  std::uint64_t sequence = 0;  // its flush frame
  std::uint64_t done = kNever;  // its flush_done frame
};

struct IndexedMark {
  std::uint64_t sequence = 0;
  std::uint64_t time_ns = 0;
  std::string label;
};

struct IndexedBase {
  std::uint8_t device = 0;
  std::uint64_t offset = 0;
  std::span<const std::uint8_t> data;
};

class RecordingIndex {
 public:
  // Reads and checks the whole recording (RecordingError on any fault) and
  // requires that every ack, failed and flush_done names a change or flush
  // seen before it, once.
  explicit RecordingIndex(std::span<const std::uint8_t> bytes);

  const std::vector<ExportInfo>& exports() const { return exports_; }
  const std::vector<IndexedBase>& bases() const { return bases_; }
  // In the recording's order (by sequence).
  const std::vector<IndexedChange>& changes() const { return changes_; }
  const std::vector<IndexedFlush>& flushes() const { return flushes_; }
  const std::vector<IndexedMark>& marks() const { return marks_; }
  // Indices in changes() of the changes that became durable, in the order
  // they did (by their `durable` frame).
  const std::vector<std::size_t>& durable_order() const { return durable_order_; }
  // The end frame's sequence; whether an error stopped the recording, and why.
  std::uint64_t end() const { return end_; }
  bool stopped() const { return stopped_; }
  const std::string& stop_reason() const { return stop_reason_; }

 private:
  std::vector<ExportInfo> exports_;
  std::vector<IndexedBase> bases_;
  std::vector<IndexedChange> changes_;
  std::vector<IndexedFlush> flushes_;
  std::vector<IndexedMark> marks_;
  std::vector<std::size_t> durable_order_;
  std::uint64_t end_ = 0;
  bool stopped_ = false;
  std::string stop_reason_;
};

}  // namespace crashlab
