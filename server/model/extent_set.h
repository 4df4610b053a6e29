// SPDX-License-Identifier: BSD-3-Clause
// ExtentSet: a set of byte ranges, merged: the dirty data in a drive's write
// cache. Each byte carries the tag of the write that put it there (the part
// of the device it belongs to); only ranges of one tag merge.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>

#include "server/model/timing_model.h"

namespace nvj {

class ExtentSet {
 public:
  struct Range {
    std::uint64_t begin;
    std::uint64_t end;  // exclusive
    std::uint8_t tag;
  };

  // The range takes `tag`, whatever it held before (a newer write).
  void insert(std::uint64_t begin, std::uint64_t end, std::uint8_t tag = 0);
  void erase(std::uint64_t begin, std::uint64_t end);
  // Every byte of [begin, end) is in the set, whatever its tag.
  bool contains(std::uint64_t begin, std::uint64_t end) const;
  bool empty() const { return ranges_.empty(); }
  std::uint64_t bytes() const { return bytes_; }
  std::uint64_t bytes(std::uint8_t tag) const { return tag_bytes_[tag]; }
  std::size_t size() const { return ranges_.size(); }

  // The first range that ends after `pos` (an elevator's next stop), else the
  // first range of all (the sweep starts again from the low end).
  std::optional<Range> next_from(std::uint64_t pos) const;

 private:
  struct Extent {
    std::uint64_t end;
    std::uint8_t tag;
  };
  using Map = std::map<std::uint64_t, Extent>;  // begin -> end, tag
  Map::iterator add(std::uint64_t begin, std::uint64_t end, std::uint8_t tag);
  Map::iterator remove(Map::iterator it);

  Map ranges_;
  std::uint64_t bytes_ = 0;
  std::array<std::uint64_t, kIoTags> tag_bytes_{};
};

}  // namespace nvj
