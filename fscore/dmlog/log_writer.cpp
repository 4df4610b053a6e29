// SPDX-License-Identifier: BSD-3-Clause
#include "fscore/dmlog/log_writer.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>

namespace fscore::dmlog {

LogWriter::LogWriter(BlockSink& out, std::uint32_t sectorsize) : out_(out), sectorsize_(sectorsize) {
  if (!valid_sector_size(sectorsize))
    throw std::invalid_argument("dm-log-writes sector size " + std::to_string(sectorsize) +
                                ": a power of two from 512 to 1 MiB");
  sector_.resize(sectorsize);
}

void LogWriter::header(const EntryHeader& entry, std::string_view label) {
  std::fill(sector_.begin(), sector_.end(), std::uint8_t{0});
  encode_entry(entry, sector_);
  if (!label.empty()) std::memcpy(sector_.data() + kHeaderBytes, label.data(), label.size());
  out_.write(next_ * sectorsize_, sector_);
  ++next_;
  ++entries_;
}

void LogWriter::write(std::uint64_t sector, std::span<const std::uint8_t> data, std::uint64_t flags) {
  if ((flags & ~(kFlush | kFua | kMetadata)) != 0)
    throw std::invalid_argument("a write's flags are FLUSH, FUA and METADATA, not " + describe_flags(flags));
  if (data.empty() || data.size() % sectorsize_ != 0)
    throw std::invalid_argument("a write of " + std::to_string(data.size()) + " bytes: not whole sectors of " +
                                std::to_string(sectorsize_));
  const std::uint64_t nr = data.size() / sectorsize_;
  header({sector, nr, flags, 0}, {});
  out_.write(next_ * sectorsize_, data);
  next_ += nr;
}

void LogWriter::discard(std::uint64_t sector, std::uint64_t nr_sectors) {
  if (nr_sectors == 0) throw std::invalid_argument("a discard of no sectors");
  header({sector, nr_sectors, kDiscard, 0}, {});
}

void LogWriter::flush() { header({0, 0, kFlush, 0}, {}); }

void LogWriter::mark(std::string_view label) {
  if (label.size() > sectorsize_ - kHeaderBytes - 1)
    throw std::invalid_argument("a mark's label of " + std::to_string(label.size()) + " bytes: a sector of " +
                                std::to_string(sectorsize_) + " holds at most " +
                                std::to_string(sectorsize_ - kHeaderBytes - 1));
  if (label.find('\0') != std::string_view::npos) throw std::invalid_argument("a mark's label holds a NUL byte");
  header({0, 0, kMark, label.size()}, label);
}

void LogWriter::finish() {
  std::fill(sector_.begin(), sector_.end(), std::uint8_t{0});
  Super s;
  s.nr_entries = entries_;
  s.sectorsize = sectorsize_;
  encode_super(s, sector_);
  out_.write(0, sector_);
}

}  // namespace fscore::dmlog
