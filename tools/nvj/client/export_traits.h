// SPDX-License-Identifier: BSD-3-Clause
// What an NBD export tells its clients about the device behind it, asked as
// the kernel's NBD client asks it (NBD flags and block sizes, during the
// handshake): from any NBD server, not only nvjournal's.
#pragma once

#include <cstdint>
#include <string>

#include "tools/nvj/client/server_address.h"

namespace nvj::cli {

struct ExportTraits {
  bool rotational = false;  // NBD_FLAG_ROTATIONAL
  bool write_back = true;   // NBD_FLAG_SEND_FLUSH: a volatile write cache
  bool fua = true;          // NBD_FLAG_SEND_FUA
  bool trim = true;         // NBD_FLAG_SEND_TRIM
  // The minimum block size as a sector size a block device can take (512 to
  // 4096; 512 when the server gives none or a smaller one), and the
  // preferred one (at least the logical one).
  std::uint32_t logical_sector = 512;
  std::uint32_t physical_sector = 512;

  // "rotational, write-back cache, no trim, sectors 512/4096"
  std::string describe() const;
};

// Connects to one export and asks. Throws std::runtime_error with libnbd's
// reason.
ExportTraits query_export_traits(const ServerAddress& server, const std::string& export_name);

}  // namespace nvj::cli
