// SPDX-License-Identifier: BSD-3-Clause
// MemorySink: fscore's BlockSink into one contiguous buffer that grows to
// hold every byte written, for tests and fuzz drivers that read back what a
// writer made as a whole (a dm-log-writes log: its super block comes last,
// at byte 0). Unwritten bytes inside it are zeroes.
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

#include "fscore/block_io.h"

namespace nvj::test {

struct MemorySink final : fscore::BlockSink {
  std::vector<std::uint8_t> bytes;
  void write(std::uint64_t offset, std::span<const std::uint8_t> data) override {
    if (bytes.size() < offset + data.size()) bytes.resize(offset + data.size());
    std::copy(data.begin(), data.end(), bytes.begin() + static_cast<std::ptrdiff_t>(offset));
  }
};

}  // namespace nvj::test
