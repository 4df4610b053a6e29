// SPDX-License-Identifier: BSD-3-Clause
#include "fscore/record/old_data.h"

#include <cstring>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace fscore::record {

namespace {

// One sector: eight lines of 64 bytes, a text a reader of a hex dump knows
// again ("nvjournal: old data...").
constexpr std::string_view kLine = "nvjournal: old data, written by no file of this run ===========\n";
static_assert(kLine.size() == 64 && kOldDataSector % kLine.size() == 0);

const std::vector<std::uint8_t>& buffer() {
  static const std::vector<std::uint8_t> bytes = [] {
    std::vector<std::uint8_t> b(kOldDataSpan);
    for (std::size_t at = 0; at < b.size(); at += kLine.size()) std::memcpy(b.data() + at, kLine.data(), kLine.size());
    return b;
  }();
  return bytes;
}

}  // namespace

std::span<const std::uint8_t> old_data(std::size_t length) {
  if (length > kOldDataSpan)
    throw std::invalid_argument("old data: " + std::to_string(length) + " bytes at once (at most " +
                                std::to_string(kOldDataSpan) + ")");
  return std::span<const std::uint8_t>(buffer()).first(length);
}

bool is_old_data(std::span<const std::uint8_t> bytes) {
  if (bytes.size() % kOldDataSector != 0) return false;
  const std::span<const std::uint8_t> sector = old_data(kOldDataSector);
  for (std::size_t at = 0; at < bytes.size(); at += kOldDataSector)
    if (std::memcmp(bytes.data() + at, sector.data(), kOldDataSector) != 0) return false;
  return true;
}

}  // namespace fscore::record
