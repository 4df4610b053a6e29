// SPDX-License-Identifier: BSD-3-Clause
// LogReader: a dm-log-writes log (log_format.h) read whole and checked, its
// entries in the log's order with their data where it lies in the log's
// bytes (which must outlive the reader). Every fault is a LogError naming
// the entry (its number from 0, as replay-log counts them, and its byte in
// the log): a super block that is not dm-log-writes', an entry cut short by
// the end of the log, unknown flags, an entry with neither flags nor
// sectors, a mark with other flags or whose label does not fit its sector, a data length on an
// entry that is no mark, a range past the end of the device. Pure.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "fscore/dmlog/log_format.h"

namespace fscore::dmlog {

class LogError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct Entry {
  std::uint64_t index = 0;       // from 0, in the log's order
  std::uint64_t log_offset = 0;  // its header's byte in the log
  EntryHeader header;
  std::span<const std::uint8_t> data;  // a write's: nr_sectors × sectorsize bytes
  std::string label;                   // a mark's

  bool is(std::uint64_t flag) const { return (header.flags & flag) != 0; }
};

struct ReadOptions {
  // Also read the entries past the super block's count, as long as they
  // are whole and valid (a log whose writer stopped before rewriting its
  // count); otherwise they are only counted (LogReader::uncounted).
  bool past_count = false;
  // The data device's size in bytes, when known: an entry past it is an
  // error.
  std::optional<std::uint64_t> device_bytes;
};

class LogReader {
 public:
  LogReader(std::span<const std::uint8_t> log, const ReadOptions& options = {});

  const Super& super() const { return super_; }
  const std::vector<Entry>& entries() const { return entries_; }
  // Whole, valid entries found after the counted ones (read only with
  // past_count; counted either way).
  std::uint64_t uncounted() const { return uncounted_; }
  // The byte just past the last sector any entry writes or discards on the
  // data device.
  std::uint64_t extent() const { return extent_; }

 private:
  // The entry at `offset`, or a LogError naming it; nullopt where
  // `lenient` and it is not a whole, valid entry.
  std::optional<Entry> entry_at(std::uint64_t index, std::uint64_t offset, bool lenient) const;

  std::span<const std::uint8_t> log_;
  ReadOptions options_;
  Super super_;
  std::vector<Entry> entries_;
  std::uint64_t uncounted_ = 0;
  std::uint64_t extent_ = 0;
};

}  // namespace fscore::dmlog
