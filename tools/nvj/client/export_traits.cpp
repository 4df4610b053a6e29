// SPDX-License-Identifier: BSD-3-Clause
#include "tools/nvj/client/export_traits.h"

#include <libnbd.h>

#include <algorithm>
#include <stdexcept>

namespace nvj::cli {
namespace {

// A sector size a Linux block device takes: a power of two, 512 to 4096.
std::uint32_t as_sector(std::int64_t bytes) {
  std::uint32_t sector = 512;
  while (sector < 4096 && static_cast<std::int64_t>(sector) * 2 <= bytes) sector *= 2;
  return sector;
}

}  // namespace

std::string ExportTraits::describe() const {
  return std::string(rotational ? "rotational" : "non-rotational") + ", " +
         (write_back ? "write-back cache" : "write-through") + ", " + (trim ? "trim" : "no trim") + ", sectors " +
         std::to_string(logical_sector) + "/" + std::to_string(physical_sector);
}

ExportTraits query_export_traits(const ServerAddress& server, const std::string& export_name) {
  NbdHandle h = server.connect(export_name);
  auto flag = [&](int (*ask)(nbd_handle*), const char* what) {
    const int answer = ask(h.get());
    if (answer == -1)
      throw std::runtime_error("cannot ask export '" + export_name + "' of " + server.text() + " " + what + ": " +
                               nbd_get_error());
    return answer == 1;
  };
  ExportTraits t;
  t.rotational = flag(nbd_is_rotational, "whether it rotates");
  t.write_back = flag(nbd_can_flush, "whether it flushes");
  t.fua = flag(nbd_can_fua, "whether it takes FUA");
  t.trim = flag(nbd_can_trim, "whether it trims");
  const std::int64_t minimum = nbd_get_block_size(h.get(), LIBNBD_SIZE_MINIMUM);
  const std::int64_t preferred = nbd_get_block_size(h.get(), LIBNBD_SIZE_PREFERRED);
  if (minimum == -1 || preferred == -1)
    throw std::runtime_error("cannot ask export '" + export_name + "' of " + server.text() + " its block sizes: " +
                             nbd_get_error());
  t.logical_sector = as_sector(minimum);
  // The preferred size is the physical sector's where it can be one.
  const bool sector_like = preferred > 0 && preferred <= 65536 && (preferred & (preferred - 1)) == 0;
  t.physical_sector = std::max(t.logical_sector, sector_like ? static_cast<std::uint32_t>(preferred) : 0u);
  nbd_shutdown(h.get(), 0);
  return t;
}

}  // namespace nvj::cli
