// SPDX-License-Identifier: BSD-3-Clause
#include "fscore/record/replayed_exports.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace fscore::record {

ReplayedExports::ReplayedExports(const std::vector<ExportInfo>& exports)
    : exports_(exports), pages_(exports.size()) {}

void ReplayedExports::put(std::uint8_t device, std::uint64_t offset, const std::uint8_t* data, std::uint64_t length) {
  auto& pages = pages_.at(device);
  if (offset > exports_.at(device).size || length > exports_[device].size - offset)
    throw std::out_of_range("a change past the end of export " + exports_[device].name);
  while (length > 0) {
    const std::uint64_t index = offset / kPage;
    const std::uint64_t within = offset % kPage;
    const std::uint64_t n = std::min(length, kPage - within);
    if (data == nullptr) {  // zeroes: a page that was never written stays absent
      if (auto it = pages.find(index); it != pages.end()) std::memset(it->second.data() + within, 0, n);
    } else {
      auto [it, added] = pages.try_emplace(index);
      if (added) it->second.fill(0);
      std::memcpy(it->second.data() + within, data, n);
      data += n;
    }
    offset += n;
    length -= n;
  }
}

void ReplayedExports::apply(const Frame& frame) {
  switch (frame.kind) {
    case FrameKind::base:
    case FrameKind::write:
      put(frame.device, frame.offset, frame.data.data(), frame.length);
      break;
    case FrameKind::zero:
    case FrameKind::trim:  // the server's stores read trimmed ranges as zeroes
      put(frame.device, frame.offset, nullptr, frame.length);
      break;
    default:
      break;
  }
}

void ReplayedExports::read(std::uint8_t device, std::uint64_t offset, std::span<std::uint8_t> out) const {
  const auto& pages = pages_.at(device);
  if (offset > exports_.at(device).size || out.size() > exports_[device].size - offset)
    throw std::out_of_range("a read past the end of export " + exports_[device].name);
  std::size_t done = 0;
  while (done < out.size()) {
    const std::uint64_t at = offset + done;
    const std::uint64_t within = at % kPage;
    const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(out.size() - done, kPage - within));
    if (auto it = pages.find(at / kPage); it != pages.end())
      std::memcpy(out.data() + done, it->second.data() + within, n);
    else
      std::memset(out.data() + done, 0, n);
    done += n;
  }
}

}  // namespace fscore::record
