// SPDX-License-Identifier: BSD-3-Clause
// The dm-log-writes reader's fuzz target: what dm_log_driver.cpp (or
// libFuzzer) feeds to LLVMFuzzerTestOneInput. An input is a log's bytes
// (fscore/dmlog/log_format.h).
#pragma once

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace nvj::fuzz::dm_log {

struct Outcome {
  std::uint64_t inputs = 0;
  std::uint64_t refused = 0;  // a LogError
  std::uint64_t read = 0;     // read whole and imported
  std::uint64_t entries = 0;
};
const Outcome& outcome();

}  // namespace nvj::fuzz::dm_log
