// SPDX-License-Identifier: BSD-3-Clause
#include "fscore/dmlog/log_reader.h"

#include <algorithm>
#include <cstdio>
#include <string>

namespace fscore::dmlog {

namespace {

using std::to_string;

std::string hex(std::uint64_t v) {
  char text[24];
  std::snprintf(text, sizeof text, "%#llx", static_cast<unsigned long long>(v));
  return text;
}

std::string where(std::uint64_t index, std::uint64_t offset) {
  return "entry " + to_string(index) + " (log byte " + to_string(offset) + ")";
}

}  // namespace

LogReader::LogReader(std::span<const std::uint8_t> log, const ReadOptions& options) : log_(log), options_(options) {
  if (log.size() < kMinSectorSize)
    throw LogError("not a dm-log-writes log: " + to_string(log.size()) +
                   " bytes, shorter than its super block's sector (512)");
  super_ = decode_super(log);
  if (super_.magic != kMagic)
    throw LogError("not a dm-log-writes log: the super block's magic is " + hex(super_.magic) + ", not " +
                   hex(kMagic));
  if (super_.version != kVersion)
    throw LogError("the super block's version is " + to_string(super_.version) + "; only version 1 is read");
  if (!valid_sector_size(super_.sectorsize))
    throw LogError("the super block's sector size is " + to_string(super_.sectorsize) +
                   ": not a power of two from 512 to 1 MiB");
  const std::uint64_t sector = super_.sectorsize;
  std::uint64_t offset = sector;
  for (std::uint64_t i = 0; i < super_.nr_entries; ++i) {
    entries_.push_back(*entry_at(i, offset, false));
    offset += sector * (1 + entries_.back().data.size() / sector);
  }
  for (std::uint64_t i = super_.nr_entries;; ++i) {
    std::optional<Entry> e = entry_at(i, offset, true);
    if (!e) break;
    ++uncounted_;
    offset += sector * (1 + e->data.size() / sector);
    if (options_.past_count) entries_.push_back(std::move(*e));
  }
  for (const Entry& e : entries_)
    if (!e.is(kMark) && e.header.nr_sectors > 0)
      extent_ = std::max(extent_, (e.header.sector + e.header.nr_sectors) * sector);
}

std::optional<Entry> LogReader::entry_at(std::uint64_t index, std::uint64_t offset, bool lenient) const {
  const std::uint64_t sector = super_.sectorsize;
  auto fault = [&](const std::string& what) -> std::optional<Entry> {
    if (lenient) return std::nullopt;
    throw LogError(where(index, offset) + ": " + what);
  };
  if (offset > log_.size() || log_.size() - offset < sector)
    return fault("the log ends in its header: it holds " + to_string(log_.size()) + " bytes, the super block counts " +
                 to_string(super_.nr_entries) + " entries (truncated?)");
  Entry e;
  e.index = index;
  e.log_offset = offset;
  e.header = decode_entry(log_.subspan(offset, sector));
  const EntryHeader& h = e.header;
  if ((h.flags & ~kKnownFlags) != 0) return fault("unknown flags " + describe_flags(h.flags));
  if (h.flags == 0 && h.nr_sectors == 0) return fault("an empty entry: no flags and no sectors");
  if (h.flags & kMark) {
    if (h.flags != kMark) return fault("a mark with other flags: " + describe_flags(h.flags));
    if (h.nr_sectors != 0) return fault("a mark with " + to_string(h.nr_sectors) + " sectors of data");
    if (h.data_len > sector - kHeaderBytes - 1)
      return fault("a mark's label of " + to_string(h.data_len) + " bytes, more than its sector holds (" +
                   to_string(sector - kHeaderBytes - 1) + ")");
    const auto* text = reinterpret_cast<const char*>(log_.data() + offset + kHeaderBytes);
    e.label.assign(text, static_cast<std::size_t>(h.data_len));
    if (e.label.find('\0') != std::string::npos) return fault("a mark's label holds a NUL byte within its length");
    return e;
  }
  if (h.data_len != 0)
    return fault("data length " + to_string(h.data_len) + " on a " + describe_flags(h.flags) +
                 " entry: only a mark has one (a write's data is its sectors)");
  if (log_[offset + kHeaderBytes] != 0) return fault("a label in an entry that is no mark");
  if (h.nr_sectors > (std::uint64_t{1} << 40) / sector || h.sector > (std::uint64_t{1} << 52) / sector)
    return fault("sectors " + to_string(h.sector) + "+" + to_string(h.nr_sectors) + ": beyond any device");
  const std::uint64_t end = (h.sector + h.nr_sectors) * sector;
  if (options_.device_bytes && h.nr_sectors > 0 && end > *options_.device_bytes)
    return fault("sectors " + to_string(h.sector) + ".." + to_string(h.sector + h.nr_sectors - 1) +
                 " lie beyond the device's " + to_string(*options_.device_bytes / sector) + " sectors of " +
                 to_string(sector) + " bytes");
  if (h.flags & kDiscard) return e;  // a discard carries no data
  const std::uint64_t bytes = h.nr_sectors * sector;
  if (log_.size() - offset - sector < bytes)
    return fault("its data (" + to_string(h.nr_sectors) + " sectors) runs past the end of the log (truncated?)");
  e.data = log_.subspan(offset + sector, bytes);
  return e;
}

}  // namespace fscore::dmlog
