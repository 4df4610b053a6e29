// SPDX-License-Identifier: BSD-3-Clause
// LogFollower: follows an XFS log from the writes its device receives, in
// the order it receives them, and reports each log record the kernel writes
// (an in-core log buffer, "iclog", written out): its LSN, length, operation
// count, the tail LSN its header carries, its CRC checked; and from the
// newest whole record, the log's head (where the next record goes) and tail.
//
// A record may come in several writes (split where it wraps past the end of
// the log, or by a transport's largest request) and they may arrive out of
// order. A header found in a write opens the record; it is whole once every
// one of its blocks has been written: by a write seen since, or before (a
// block already stamped with the record's cycle, see log_record.h). A whole
// record is durable when every write of it was FUA, or at the first flush
// that arrives after its last write was acknowledged; the log write latency
// is its first write's arrival to that acknowledgement.
//
// Pure: times come in with the writes; blocks written earlier are read back
// through a BlockSource over the log (basic block N at byte N * 512).
#pragma once

#include <cstdint>
#include <deque>
#include <span>
#include <string>
#include <vector>

#include "fscore/block_io.h"
#include "fscore/xfs/log_record.h"

namespace fscore::xfs {

using Nanos = std::int64_t;

// One write to the log, in log bytes (an internal log's caller maps the
// data device's offsets to those).
struct LogWrite {
  std::uint64_t offset = 0;
  std::span<const std::uint8_t> bytes;
  bool fua = false;
  Nanos arrived = 0;    // when the device received it
  Nanos completed = 0;  // when the device acknowledged it
};

// One whole record.
struct FollowedRecord {
  LogRecordHeader header;
  std::uint32_t blocks = 0;  // header and data blocks
  CrcCheck crc = CrcCheck::absent;
  std::uint32_t writes = 0;  // writes that carried its blocks (seen after its header's)
  bool all_fua = true;       // every one of those was FUA
  Nanos first_write = 0;     // the earliest arrival of those writes
  Nanos written = 0;         // the acknowledgement of its last block
  Nanos durable = 0;         // the acknowledgement that made it durable (0: not yet)
  Nanos latency() const { return durable - first_write; }
  std::uint64_t bytes() const { return std::uint64_t{blocks} * kBasicBlock; }
};

struct FollowerTotals {
  std::uint64_t records = 0;     // whole records
  std::uint64_t operations = 0;  // their operations
  std::uint64_t record_bytes = 0;  // their header and data blocks
  std::uint64_t crc_ok = 0;
  std::uint64_t crc_bad = 0;
  std::uint64_t crc_absent = 0;  // written without one (mkfs, xfs_repair)
  std::uint64_t durable = 0;     // records made durable, each with a latency
  std::uint64_t log_writes = 0;  // writes to the log
  std::uint64_t log_bytes = 0;   // bytes they carried
  std::uint64_t flushes = 0;
  std::uint64_t problems = 0;
};

class FollowerEvents {
 public:
  virtual ~FollowerEvents() = default;
  virtual void on_record(const FollowedRecord&) {}   // whole, CRC checked
  virtual void on_durable(const FollowedRecord&) {}  // then durable
  virtual void on_problem(const std::string&) {}
};

class LogFollower {
 public:
  // Records waiting for their blocks, and whole ones waiting for a flush:
  // past these the oldest is given up (a problem) or left not durable.
  static constexpr std::size_t kMaxOpen = 32;
  static constexpr std::size_t kMaxUnflushed = 256;

  // `log` reads what was written before; the log is `log_blocks` basic
  // blocks long (at most log's size).
  LogFollower(const BlockSource& log, std::uint64_t log_blocks, FollowerEvents& events);

  // The log's length, once known better (the filesystem's superblock says).
  void set_log_blocks(std::uint64_t log_blocks);
  std::uint64_t log_blocks() const { return log_blocks_; }

  // The bytes of `w` must already be in `log`.
  void write(const LogWrite& w);
  // A flush of the log or of the filesystem device.
  void flush(Nanos arrived, Nanos completed);

  bool synchronized() const { return have_newest_; }  // a whole record has been seen
  Lsn head() const { return head_; }  // after the newest whole record
  Lsn tail() const { return tail_; }  // the tail the newest whole record carries
  // Head to tail over the log's length.
  double fill() const;
  const FollowerTotals& totals() const { return totals_; }

 private:
  struct Open {
    FollowedRecord record;
    std::vector<std::uint8_t> covered;  // per block of the record: written
    std::uint32_t missing = 0;
  };

  // The header blocks found in `w`: records opened.
  void find_headers(const LogWrite& w, std::uint64_t first_block, std::uint64_t blocks);
  void open_record(const LogRecordHeader& h, const LogWrite& w, std::uint64_t first_block, std::uint64_t blocks);
  // Marks the blocks of `o` that [first, first + n) covers; true if it did.
  bool cover(Open& o, std::uint64_t first, std::uint64_t n) const;
  void finish(FollowedRecord& r, const LogWrite& w, std::uint64_t first_block, std::uint64_t blocks);
  void made_durable(FollowedRecord& r, Nanos at);
  void problem(const std::string& what);

  const BlockSource& log_;
  std::uint64_t log_blocks_;
  FollowerEvents& events_;
  std::deque<Open> open_;
  std::deque<FollowedRecord> unflushed_;
  std::vector<std::uint8_t> buffer_;  // a record read back
  bool have_newest_ = false;
  Lsn newest_;
  Lsn head_, tail_;
  FollowerTotals totals_;
};

}  // namespace fscore::xfs
