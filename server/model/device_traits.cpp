// SPDX-License-Identifier: BSD-3-Clause
#include "server/model/device_traits.h"

#include <stdexcept>

#include "common/size.h"

namespace nvj {
namespace {

bool power_of_two(std::uint64_t n) { return n != 0 && (n & (n - 1)) == 0; }

std::uint32_t sector_size(std::string_view which, std::string_view text, std::uint32_t min, std::uint32_t max) {
  std::uint64_t bytes = 0;
  try {
    bytes = parse_size(text);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument("the " + std::string(which) + " sector size: " + e.what());
  }
  if (!power_of_two(bytes))
    throw std::invalid_argument("the " + std::string(which) + " sector size " + std::string(text) +
                                " is not a power of two");
  if (bytes < min || bytes > max)
    throw std::invalid_argument("the " + std::string(which) + " sector size " + std::string(text) + " is not within " +
                                std::to_string(min) + " to " + std::to_string(max) + " bytes");
  return static_cast<std::uint32_t>(bytes);
}

}  // namespace

std::string DeviceTraits::describe() const {
  return std::string(rotational ? "rotational" : "non-rotational") + ", " +
         (write_back ? "write-back cache" : "write-through") + ", " + (trim ? "trim" : "no trim") + ", " +
         (zero ? "zero" : "no zero") + ", sectors " + std::to_string(logical_sector) + "/" +
         std::to_string(physical_sector);
}

DeviceTraits untimed_traits(Durability durability) {
  DeviceTraits t;
  t.write_back = durability == Durability::on_flush;
  return t;
}

DeviceTraits TraitOverrides::applied_to(DeviceTraits t) const {
  if (rotational) t.rotational = *rotational;
  if (write_back) t.write_back = *write_back;
  if (trim) t.trim = *trim;
  if (zero) t.zero = *zero;
  if (logical_sector) t.logical_sector = *logical_sector;
  if (physical_sector) t.physical_sector = *physical_sector;
  return t;
}

bool parse_yes_no(std::string_view text) {
  if (text == "yes") return true;
  if (text == "no") return false;
  throw std::invalid_argument("expected yes or no");
}

bool parse_write_cache(std::string_view text) {
  if (text == "write-back") return true;
  if (text == "write-through") return false;
  throw std::invalid_argument("expected write-back or write-through");
}

void parse_sector_sizes(std::string_view text, TraitOverrides& out) {
  const std::size_t slash = text.find('/');
  const std::string_view logical = text.substr(0, slash);
  const std::uint32_t l = sector_size("logical", logical, SectorLimits::kMinLogical, SectorLimits::kMaxLogical);
  std::uint32_t p = l;
  if (slash != std::string_view::npos) {
    const std::string_view physical = text.substr(slash + 1);
    p = sector_size("physical", physical, SectorLimits::kMinLogical, SectorLimits::kMaxPhysical);
    if (p < l)
      throw std::invalid_argument("the physical sector size " + std::string(physical) +
                                  " is smaller than the logical one, " + std::string(logical));
  }
  out.logical_sector = l;
  out.physical_sector = p;
}

std::string check_traits(const DeviceTraits& traits, std::uint64_t size) {
  if (size % traits.logical_sector != 0)
    return "the export's size, " + format_size(size) + ", is not a whole number of " +
           std::to_string(traits.logical_sector) + "-byte logical sectors";
  return {};
}

}  // namespace nvj
