// SPDX-License-Identifier: BSD-3-Clause
// ReplayedExports: what a recording's exports hold after some of its frames
// (recording_format.h) have landed: base, write, zero and trim frames change
// the contents, the others do not. Sparse, in 4 KiB pages in memory: what
// no frame touched reads as zeroes. Replaying every change of a recording in
// its order gives the exports' final contents; the crash states are built
// from the same frames, some left out.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <unordered_map>
#include <vector>

#include "fscore/record/frame_reader.h"

namespace fscore::record {

class ReplayedExports {
 public:
  static constexpr std::uint64_t kPage = 4096;

  explicit ReplayedExports(const std::vector<ExportInfo>& exports);

  // Lands the frame's bytes if it is a base, write, zero or trim.
  void apply(const Frame& frame);
  void read(std::uint8_t device, std::uint64_t offset, std::span<std::uint8_t> out) const;
  std::uint64_t size(std::uint8_t device) const { return exports_.at(device).size; }
  // Pages that hold something other than zeroes were ever written.
  std::size_t pages(std::uint8_t device) const { return pages_.at(device).size(); }

 private:
  using Page = std::array<std::uint8_t, kPage>;
  void put(std::uint8_t device, std::uint64_t offset, const std::uint8_t* data, std::uint64_t length);

  std::vector<ExportInfo> exports_;
  std::vector<std::unordered_map<std::uint64_t, Page>> pages_;
};

}  // namespace fscore::record
