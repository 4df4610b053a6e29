// SPDX-License-Identifier: BSD-3-Clause
// The journal inspector's fuzz target: what journal_inspect_driver.cpp (or
// libFuzzer) feeds to LLVMFuzzerTestOneInput.
//
// An input is a device holding a journal, and a filesystem to replay into:
//   - the 8 bytes kMagic, le64 device size (at most kMaxDeviceBytes are
//     used), le32 block size (the filesystem's; 4096 when not a power of
//     two from 1 to 64 KiB), le32 filesystem blocks (at most
//     kMaxFsBytes / block size are used), u8 run count (modulo 9), then
//     that many runs {le64 first block, le32 count}: the journal's blocks
//     on the device in log order, as an internal journal's inode maps them
//     (none: the device is a journal device, log block N at block N);
//   - then records {le64 offset, le32 length, length bytes} as in
//     image_reader_fuzz.h's sparse images: the device reads as zeros where
//     no record lands, later records win, a record cut short by the end of
//     the input keeps what it has.
// The journal superblock is log block 0. Runs are trimmed to the device and
// must cover the journal, as the image reader promises for the journals it
// accepts.
#pragma once

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace nvj::fuzz::inspect {

inline constexpr std::uint8_t kMagic[8] = {'N', 'V', 'J', 'J', 'R', 'N', 'L', '1'};
inline constexpr std::size_t kHeaderSize = 8 + 8 + 4 + 4 + 1;
inline constexpr std::size_t kRunSize = 12;
inline constexpr std::size_t kMaxRuns = 8;
inline constexpr std::size_t kRecordHeaderSize = 12;
inline constexpr std::uint64_t kMaxDeviceBytes = std::uint64_t{16} << 20;
inline constexpr std::uint64_t kMaxFsBytes = std::uint64_t{16} << 20;

struct Outcome {
  std::uint64_t inputs = 0;
  std::uint64_t refused = 0;        // no journal superblock, or runs that do not hold the journal
  std::uint64_t fast_commit = 0;    // scan_journal refused it
  std::uint64_t clean = 0;
  std::uint64_t scan_errors = 0;
  std::uint64_t replays = 0;        // replays without an error
  std::uint64_t replay_errors = 0;
  std::uint64_t einval = 0;         // replays that failed with EINVAL (a revoke count too large)
  std::uint64_t replayed_blocks = 0;
};
const Outcome& outcome();

}  // namespace nvj::fuzz::inspect
