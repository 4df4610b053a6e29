// SPDX-License-Identifier: BSD-3-Clause
// The fields of an XFS superblock (xfs_format.h, xfs_dsb; big-endian, at
// byte 0 of the data device) that say where the log is. Pure.
//
//   offset  size  field
//        0     4  magic "XFSB"
//        4     4  block size, bytes
//       48     8  log start: a filesystem block (AG number << agblklog |
//                 block in the AG); 0 when the log is on its own device
//       84     4  blocks per AG
//       96     4  log blocks
//      124     1  log2 of the blocks per AG, rounded up (agblklog)
#pragma once

#include <cstdint>
#include <optional>

#include "fscore/block_io.h"

namespace fscore::xfs {

struct LogPlace {
  bool external = false;    // on the log device, from its byte 0
  std::uint64_t offset = 0;  // bytes into the data device, when internal
  std::uint64_t length = 0;  // bytes
};

// Where `data`'s XFS keeps its log; nothing when `data` holds no XFS.
// Throws std::runtime_error for a superblock whose log lies outside it.
std::optional<LogPlace> locate_log(const BlockSource& data);

}  // namespace fscore::xfs
