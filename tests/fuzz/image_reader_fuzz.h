// SPDX-License-Identifier: BSD-3-Clause
// The image reader's fuzz target: what fuzz_driver.cpp (or libFuzzer)
// feeds to LLVMFuzzerTestOneInput.
//
// An input is an image, in one of two forms:
//   - flat: the bytes are the device, byte for byte;
//   - sparse: the 8 bytes kSparseMagic, a le64 device size, then records
//     {le64 offset, le32 length, length bytes}; the device reads as zeros
//     where no record lands, later records win, and a record cut short by
//     the end of the input keeps the bytes it has. A 2 GiB image with a few
//     dozen metadata blocks is a few dozen KiB of input.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace nvj::fuzz {

inline constexpr std::uint8_t kSparseMagic[8] = {'N', 'V', 'J', 'S', 'P', 'A', 'R', 'S'};
inline constexpr std::size_t kSparseHeaderSize = 16;  // magic, le64 device size
inline constexpr std::size_t kRecordHeaderSize = 12;  // le64 offset, le32 length

// How many inputs read_image accepted and rejected so far.
struct Outcome {
  std::uint64_t accepted = 0;
  std::uint64_t rejected = 0;
  std::string last_rejection;  // what read_image said about the last image it rejected
};
const Outcome& outcome();

}  // namespace nvj::fuzz
