// SPDX-License-Identifier: BSD-3-Clause
// Whether bytes are all zeroes: what a hole, a trim or a zeroed range reads
// as, and so what a copy of an export may leave out. Pure.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>

namespace fscore {

inline bool all_zeroes(std::span<const std::uint8_t> bytes) {
  // The first byte zero, and each byte equal to the one before it.
  return bytes.empty() || (bytes[0] == 0 && std::memcmp(bytes.data(), bytes.data() + 1, bytes.size() - 1) == 0);
}

// Calls `run(from, length)` for each run of `bytes`' blocks of `block` bytes
// (the last one shorter) that hold anything but zeroes, in order, joined
// where they touch. Runs start on a block.
template <typename Run>
void for_each_nonzero_run(std::span<const std::uint8_t> bytes, std::size_t block, Run&& run) {
  std::size_t start = bytes.size();  // of the run being gathered; size(): none
  for (std::size_t at = 0; at < bytes.size(); at += block) {
    const std::size_t end = std::min(bytes.size(), at + block);
    if (!all_zeroes(bytes.subspan(at, end - at))) {
      if (start == bytes.size()) start = at;
      continue;
    }
    if (start != bytes.size()) run(start, at - start);
    start = bytes.size();
  }
  if (start != bytes.size()) run(start, bytes.size() - start);
}

}  // namespace fscore
