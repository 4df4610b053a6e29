// SPDX-License-Identifier: BSD-3-Clause
// One export of a recording (crashlab/index/recording_index.h) as a dm-log-writes log
// (fscore/dmlog/), for replay-log and whatever else reads the format:
//
//   1. the recording's base (what the export held when it started) as
//      writes, a flush, and the mark `base_mark` ("mkfs", as fstests names
//      the state its replays start from);
//   2. the changes in the order dm-log-writes logs them: a write, zero or
//      trim (zeroes are written as data, trims as discards) once it is
//      acknowledged, except that one acknowledged while a flush of its
//      export was in flight waits for that flush's entry (the flush does
//      not cover it); a FUA write with its flag; every flush of the export
//      as a FLUSH entry when it completes; every mark (a fact stays a fact)
//      where it was posted;
//   3. the mark "dm-log-writes-end", as the kernel ends its logs.
//
// A change never acknowledged (in flight when the recording ended, or
// failed) is not logged, as the kernel logs only what completed: it is
// counted. Changes and bases must lie on the log's sectors, and marks fit
// in one (std::invalid_argument naming the change or mark). Pure.
#pragma once

#include <cstdint>
#include <string>

#include "crashlab/index/recording_index.h"
#include "fscore/block_io.h"

namespace crashlab {

struct LogExportOptions {
  std::uint32_t sectorsize = 512;
  std::string base_mark = "mkfs";
};

struct LogExportStats {
  std::uint64_t entries = 0, writes = 0, flushes = 0, discards = 0, marks = 0;
  std::uint64_t not_acknowledged = 0;  // changes left out
  std::uint64_t bytes = 0;             // the log's length
};

LogExportStats export_log(const RecordingIndex& index, std::uint8_t device, fscore::BlockSink& out,
                          const LogExportOptions& options = {});

}  // namespace crashlab
