// SPDX-License-Identifier: BSD-3-Clause
// DeviceTraits: what a device tells the host about itself, and so what the
// host's kernel does with it (docs/design.md, "What a device tells the
// host"): whether it rotates (the I/O scheduler a distribution gives it,
// btrfs's ssd mode), whether it keeps a volatile write cache (whether the
// kernel sends flushes and FUA), whether it discards and zeroes ranges, and
// its logical and physical sector sizes. Each timing model declares those of
// a real device of its kind; a server's parameters may override any of them
// per export (TraitOverrides).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "server/device/durability.h"

namespace nvj {

struct DeviceTraits {
  bool rotational = false;
  bool write_back = true;  // a volatile write cache: the host flushes, or writes with FUA
  bool trim = true;        // discards ranges (NBD trim)
  bool zero = true;        // zeroes ranges itself (NBD write zeroes)
  std::uint32_t logical_sector = 512;    // the smallest unit it reads and writes
  std::uint32_t physical_sector = 4096;  // the unit it writes without reading first

  // "rotational, write-back cache, no trim, no zero, sectors 512/4096"
  std::string describe() const;
  friend bool operator==(const DeviceTraits&, const DeviceTraits&) = default;
};

// A device without a timing model: no rotation, trim and zero, and a write
// cache exactly when its writes wait for a flush to be durable.
DeviceTraits untimed_traits(Durability durability);

// Sector sizes a server accepts: the logical one 512 to 4096 bytes (what the
// Linux block layer of a loop device and most kernels take), the physical
// one from the logical one to 64 KiB, both powers of two.
struct SectorLimits {
  static constexpr std::uint32_t kMinLogical = 512;
  static constexpr std::uint32_t kMaxLogical = 4096;
  static constexpr std::uint32_t kMaxPhysical = 65536;
};

// The parameters that override a model's traits for one export, unset where
// the model's own stand. Parsed from data-rotational=, data-write-cache=,
// data-trim=, data-zero= and data-sector-size= (and journal-...).
struct TraitOverrides {
  std::optional<bool> rotational, write_back, trim, zero;
  std::optional<std::uint32_t> logical_sector, physical_sector;  // set together (parse_sector_sizes)

  DeviceTraits applied_to(DeviceTraits traits) const;
};

// "yes" or "no". Throws std::invalid_argument naming the values it takes.
bool parse_yes_no(std::string_view text);
// "write-back" or "write-through" -> write_back. Throws std::invalid_argument.
bool parse_write_cache(std::string_view text);
// "LOGICAL" (the physical one the same) or "LOGICAL/PHYSICAL", in bytes or
// with a suffix (512, 4K, 512/4096) into `out`. Throws std::invalid_argument
// saying which size is wrong and why (not a power of two, out of range, a
// physical sector smaller than the logical one).
void parse_sector_sizes(std::string_view text, TraitOverrides& out);

// Why an export of `size` bytes cannot have these traits ("" if it can): its
// size must be a whole number of logical sectors.
std::string check_traits(const DeviceTraits& traits, std::uint64_t size);

}  // namespace nvj
