// SPDX-License-Identifier: BSD-3-Clause
// LogWriter: writes a dm-log-writes log (log_format.h) to a BlockSink, entry
// after entry from log sector 1, and the super block with the count last
// (finish), so a log left unfinished says it holds no entries. Sizes are
// checked before anything is written: data that is not whole sectors, a
// label that does not fit a sector, flags a writer may not give
// (std::invalid_argument). Pure.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "fscore/block_io.h"
#include "fscore/dmlog/log_format.h"

namespace fscore::dmlog {

class LogWriter {
 public:
  // `sectorsize`: a power of two from 512 to kMaxSectorSize.
  LogWriter(BlockSink& out, std::uint32_t sectorsize);

  // A write of `data` (whole sectors) at data sector `sector`; `flags` may
  // hold kFlush (a flush before it), kFua and kMetadata.
  void write(std::uint64_t sector, std::span<const std::uint8_t> data, std::uint64_t flags = 0);
  void discard(std::uint64_t sector, std::uint64_t nr_sectors);
  void flush();
  // At most sectorsize - 33 bytes, no NUL.
  void mark(std::string_view label);
  // The super block, counting every entry written.
  void finish();

  std::uint32_t sectorsize() const { return sectorsize_; }
  std::uint64_t entries() const { return entries_; }
  std::uint64_t bytes() const { return next_ * sectorsize_; }  // the log's length so far

 private:
  void header(const EntryHeader& entry, std::string_view label);

  BlockSink& out_;
  std::uint32_t sectorsize_;
  std::vector<std::uint8_t> sector_;  // one sector, the header's
  std::uint64_t next_ = 1;            // the next entry's log sector
  std::uint64_t entries_ = 0;
};

}  // namespace fscore::dmlog
