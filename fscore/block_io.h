// SPDX-License-Identifier: BSD-3-Clause
// Where images go and where they come from. fscore never opens a file or a
// device itself: the image builder writes through a BlockSink and the image
// reader reads through a BlockSource, so the same code fills a sparse file,
// a server's store or a buffer in a test.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace fscore {

class BlockSink {
 public:
  virtual ~BlockSink() = default;
  // Writes bytes at a byte offset. Errors are thrown (std::system_error or
  // std::runtime_error); a sink never writes short.
  virtual void write(std::uint64_t offset, std::span<const std::uint8_t> bytes) = 0;
};

class BlockSource {
 public:
  virtual ~BlockSource() = default;
  virtual std::uint64_t size() const = 0;
  // Reads bytes at a byte offset; throws if the range is past size().
  virtual void read(std::uint64_t offset, std::span<std::uint8_t> bytes) const = 0;
  // Words naming what [offset, offset + length) holds, cheaper than reading
  // it, where the source can give them: appended to `key`, true; false (and
  // `key` as it was) where it cannot. Two ranges of this source, at any time
  // while it lives, named by the same words hold the same bytes: the words
  // are the source's own description of them (where they lie), never a
  // hash. A reader memoises what it computes from a range under its words.
  virtual bool identity(std::uint64_t /*offset*/, std::uint64_t /*length*/, std::vector<std::uint64_t>& /*key*/) const {
    return false;
  }
};

}  // namespace fscore
