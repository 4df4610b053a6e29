// SPDX-License-Identifier: BSD-3-Clause
#include "fscore/xfs/superblock.h"

#include <array>
#include <cstring>
#include <stdexcept>
#include <string>

#include "fscore/endian.h"

namespace fscore::xfs {

std::optional<LogPlace> locate_log(const BlockSource& data) {
  std::array<std::uint8_t, 128> sb{};
  if (data.size() < sb.size()) return std::nullopt;
  data.read(0, sb);
  if (std::memcmp(sb.data(), "XFSB", 4) != 0) return std::nullopt;
  const std::uint32_t block_size = load_be<std::uint32_t>(sb.data() + 4);
  const std::uint64_t log_start = load_be<std::uint64_t>(sb.data() + 48);
  const std::uint32_t ag_blocks = load_be<std::uint32_t>(sb.data() + 84);
  const std::uint32_t log_blocks = load_be<std::uint32_t>(sb.data() + 96);
  const std::uint8_t ag_block_log = sb[124];
  if (block_size < 512 || block_size > 65536 || (block_size & (block_size - 1)) != 0 || ag_block_log > 31)
    throw std::runtime_error("xfs superblock: block size " + std::to_string(block_size) + ", agblklog " +
                             std::to_string(ag_block_log));
  LogPlace place;
  place.length = std::uint64_t{log_blocks} * block_size;
  place.external = log_start == 0;
  if (!place.external) {
    const std::uint64_t ag = log_start >> ag_block_log;
    const std::uint64_t in_ag = log_start & ((std::uint64_t{1} << ag_block_log) - 1);
    place.offset = (ag * ag_blocks + in_ag) * block_size;
    if (place.offset > data.size() || place.length > data.size() - place.offset)
      throw std::runtime_error("xfs superblock: the log (" + std::to_string(place.length) + " bytes at " +
                               std::to_string(place.offset) + ") lies outside the device");
  }
  return place;
}

}  // namespace fscore::xfs
