// SPDX-License-Identifier: BSD-3-Clause
// Whether bytes are all zeroes: what a hole, a trim or a zeroed range reads
// as, and so what a copy of an export may leave out. Pure.
#pragma once

#include <cstdint>
#include <cstring>
#include <span>

namespace fscore {

inline bool all_zeroes(std::span<const std::uint8_t> bytes) {
  // The first byte zero, and each byte equal to the one before it.
  return bytes.empty() || (bytes[0] == 0 && std::memcmp(bytes.data(), bytes.data() + 1, bytes.size() - 1) == 0);
}

}  // namespace fscore
