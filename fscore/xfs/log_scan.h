// SPDX-License-Identifier: BSD-3-Clause
// An XFS log read offline: every record header in the log's blocks, in
// block order (as `xfs_logprint -d` lists them), each record's CRC checked
// over its blocks (a record that runs past the end of the log goes on at
// its start), and the newest record: where the next one goes (the head)
// and the tail it carries. A record whose blocks a later one wrote over is
// said to be overwritten, not broken. Pure.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "fscore/block_io.h"
#include "fscore/xfs/log_record.h"

namespace fscore::xfs {

struct ScannedRecord {
  std::uint64_t block = 0;  // of its header, in the log
  LogRecordHeader header;
  CrcCheck crc = CrcCheck::absent;
  // A later record wrote over some of its blocks (they carry a later
  // cycle): a ring's stale record, its CRC not a fault.
  bool overwritten = false;
};

struct LogScan {
  std::uint64_t log_blocks = 0;        // basic blocks of the log
  std::vector<ScannedRecord> records;  // by block
  std::optional<std::size_t> newest;   // index in records of the one with the highest LSN
  Lsn head;                            // after the newest: where the next record starts
  Lsn tail;                            // the newest record's tail
  std::uint64_t crc_failures = 0;      // records whole (not overwritten) whose CRC fails
};

// `log` holds the log from its byte 0 (an external log device, or the data
// device's log region read through an offset source); `log_bytes` is the
// log's length (sb_logblocks times the block size), at most `log`'s size.
LogScan scan_log(const BlockSource& log, std::uint64_t log_bytes);

}  // namespace fscore::xfs
