// SPDX-License-Identifier: BSD-3-Clause
// The recording reader's fuzz target: what recording_driver.cpp (or
// libFuzzer) feeds to LLVMFuzzerTestOneInput. An input is a recording's
// bytes as the server writes them (fscore/record/recording_format.h).
#pragma once

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace nvj::fuzz::recording {

struct Outcome {
  std::uint64_t inputs = 0;
  std::uint64_t refused = 0;  // a RecordingError: damaged, truncated, out of place
  std::uint64_t read = 0;     // indexed, crash points and states enumerated
  std::uint64_t states = 0;
};
const Outcome& outcome();

}  // namespace nvj::fuzz::recording
