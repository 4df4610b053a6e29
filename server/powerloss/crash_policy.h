// SPDX-License-Identifier: BSD-3-Clause
// What a power cut loses (docs/design.md, "The durability contract"). Writes
// that were durable (acknowledged on an NVRAM or cache-off device, FUA, or
// acknowledged before a completed flush) always survive. Of the volatile ones:
//   all      every one is lost
//   random   each survives or not, by a seeded coin
//   reorder  a seeded random subset survives, landing in a shuffled order
// Writes in flight at the cut (not yet acknowledged) are torn: each atomic
// unit of them survives or not by the coin (the device model's unit unless
// given; torn=0: the whole write, or none).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace nvj {

struct CrashPolicy {
  enum class Kind { all, random, reorder };
  Kind kind = Kind::all;
  std::uint64_t seed = 1;
  std::optional<std::uint64_t> atomic_unit;  // bytes; 0 = whole writes; unset: each device's own

  // From "all", "random", "reorder"; throws std::invalid_argument.
  static Kind parse_kind(const std::string& text);
};

const char* to_string(CrashPolicy::Kind kind);

struct CrashReport {
  std::uint64_t durable = 0;      // writes that were durable and survive
  std::uint64_t volatile_kept = 0;
  std::uint64_t volatile_lost = 0;
  std::uint64_t in_flight = 0;    // torn
  std::uint64_t bytes_lost = 0;   // of volatile and in-flight writes
  std::uint64_t atomic_unit = 0;  // what writes in flight were torn at (0: whole)
};

}  // namespace nvj
