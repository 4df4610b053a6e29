// SPDX-License-Identifier: BSD-3-Clause
// The XFS log scan's and follower's fuzz target: what xfs_log_driver.cpp
// (or libFuzzer) feeds to LLVMFuzzerTestOneInput. An input is a log, byte
// for byte (whole 512-byte blocks are used, at most kMaxLogBytes of them),
// as nvj journal inspect reads a log device and as the server's tracer sees
// it written.
#pragma once

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace nvj::fuzz::xfs_log {

inline constexpr std::size_t kMaxLogBytes = std::size_t{1} << 20;

struct Outcome {
  std::uint64_t inputs = 0;
  std::uint64_t records = 0;       // headers found
  std::uint64_t crc_ok = 0;
  std::uint64_t crc_failures = 0;  // whole records whose CRC fails
  std::uint64_t stale = 0;
  std::uint64_t with_head = 0;     // logs with a newest record
  std::uint64_t followed = 0;      // records the follower found whole
};
const Outcome& outcome();

}  // namespace nvj::fuzz::xfs_log
