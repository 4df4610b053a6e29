// SPDX-License-Identifier: BSD-3-Clause
#include "fscore/dmlog/log_format.h"

#include <cstdio>
#include <utility>

#include "fscore/endian.h"

namespace fscore::dmlog {

Super decode_super(std::span<const std::uint8_t> bytes) {
  Super s;
  s.magic = load_le<std::uint64_t>(bytes.data());
  s.version = load_le<std::uint64_t>(bytes.data() + 8);
  s.nr_entries = load_le<std::uint64_t>(bytes.data() + 16);
  s.sectorsize = load_le<std::uint32_t>(bytes.data() + 24);
  return s;
}

void encode_super(const Super& s, std::span<std::uint8_t> out) {
  store_le(out.data(), s.magic);
  store_le(out.data() + 8, s.version);
  store_le(out.data() + 16, s.nr_entries);
  store_le(out.data() + 24, s.sectorsize);
  store_le(out.data() + 28, std::uint32_t{0});
}

EntryHeader decode_entry(std::span<const std::uint8_t> bytes) {
  EntryHeader e;
  e.sector = load_le<std::uint64_t>(bytes.data());
  e.nr_sectors = load_le<std::uint64_t>(bytes.data() + 8);
  e.flags = load_le<std::uint64_t>(bytes.data() + 16);
  e.data_len = load_le<std::uint64_t>(bytes.data() + 24);
  return e;
}

void encode_entry(const EntryHeader& e, std::span<std::uint8_t> out) {
  store_le(out.data(), e.sector);
  store_le(out.data() + 8, e.nr_sectors);
  store_le(out.data() + 16, e.flags);
  store_le(out.data() + 24, e.data_len);
}

std::string describe_flags(std::uint64_t flags) {
  static constexpr std::pair<std::uint64_t, const char*> kNames[] = {
      {kFlush, "FLUSH"}, {kFua, "FUA"}, {kDiscard, "DISCARD"}, {kMark, "MARK"}, {kMetadata, "METADATA"}};
  // Appended piece by piece: GCC 12 at -O3 misreads `"|" + std::string` (-Wrestrict).
  std::string out;
  auto add = [&out](const char* part) {
    if (!out.empty()) out.push_back('|');
    out.append(part);
  };
  for (const auto& [bit, name] : kNames)
    if (flags & bit) add(name);
  if (const std::uint64_t unknown = flags & ~kKnownFlags; unknown != 0) {
    char hex[24];
    std::snprintf(hex, sizeof hex, "%#llx", static_cast<unsigned long long>(unknown));
    add(hex);
  }
  return out.empty() ? "none" : out;
}

}  // namespace fscore::dmlog
