// SPDX-License-Identifier: BSD-3-Clause
// A dm-log-writes log (fscore/dmlog/) as a recording (fscore/record/) the
// crash lab checks: each entry becomes the frames the server would have
// recorded for it.
//
//   a write          write + ack (FUA: durable on its ack)
//   FLUSH            flush + flush_done: it covers every write before it
//                    (the log holds a write only once it has completed,
//                    and the kernel logs the writes a flush covers just
//                    before it); with data, the write after them
//   DISCARD          trim + ack
//   MARK             a mark with the entry's label (a fact stays a fact);
//                    not the kernel's "dm-log-writes-end" as the last
//                    entry (the recording's end is a crash point anyway)
//   METADATA         ignored: the recording does not tell metadata apart
//
// The entries up to and including the start mark (fstests' "mkfs"), when
// one is given, are the recording's base: what the devices held when it
// started, checked at no crash point. Before the log's first entry the
// device holds its LogSource::base, or zeroes.
//
// Two logs (the data device's and the journal's, each logged on its own)
// say nothing of the order between them. Their changes are put in order
// only at the marks both logs share (the same labels, in the same order;
// the first match is taken): between two of them, the data log's entries
// first, then the journal's; a mark only one log has is dropped. The
// recording then starts with the mark kMarksOnlyLabel, so that its crash
// points are its shared marks and its end: at those, each device holds
// what it made durable, and any subset of the rest. Pure.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "fscore/block_io.h"
#include "fscore/dmlog/log_reader.h"

namespace crashlab {

struct LogSource {
  std::string name;                       // the export's: "data", "journal"
  const fscore::dmlog::LogReader* log = nullptr;
  std::uint64_t size = 0;                 // the export's size in bytes
  // What the device held when logging began (QEMU's blklogwrites logs an
  // image as it is), under what the entries before the start mark write;
  // none: zeroes. At most `size` bytes of it are read.
  const fscore::BlockSource* base = nullptr;
};

struct LogImportStats {
  struct PerLog {
    std::uint64_t base_entries = 0;  // up to the start mark
    std::uint64_t writes = 0, fua = 0, flushes = 0, discards = 0, marks = 0;
    std::uint64_t dropped_marks = 0;  // two logs: marks the other log does not have
  };
  std::vector<PerLog> logs;
  std::uint64_t shared_marks = 0;  // two logs
  std::uint64_t frames = 0;
};

// Writes the recording, in pieces, to `out`. Throws std::invalid_argument
// naming what is wrong: no log or more than two, a start mark some log
// does not have, a size that does not hold the log's extent.
LogImportStats import_logs(const std::vector<LogSource>& logs, const std::optional<std::string>& start_mark,
                           const std::function<void(std::span<const std::uint8_t>)>& out);

}  // namespace crashlab
