// SPDX-License-Identifier: BSD-3-Clause
#include "server/lab/store_image.h"

#include <algorithm>
#include <stdexcept>

namespace nvj {
namespace {

constexpr std::uint64_t kMaxRequest = std::uint64_t{1} << 30;  // Store takes 32-bit counts

}  // namespace

void StoreSink::write(std::uint64_t offset, std::span<const std::uint8_t> bytes) {
  if (offset > store_.size() || bytes.size() > store_.size() - offset)
    throw std::out_of_range("image write past the end of the store");
  for (std::size_t done = 0; done < bytes.size();) {
    const auto n = static_cast<std::uint32_t>(std::min<std::uint64_t>(kMaxRequest, bytes.size() - done));
    store_.write(bytes.data() + done, n, offset + done, false);
    done += n;
  }
  written_ += bytes.size();
}

void StoreSource::read(std::uint64_t offset, std::span<std::uint8_t> bytes) const {
  if (offset > store_.size() || bytes.size() > store_.size() - offset)
    throw std::out_of_range("image read past the end of the device");
  for (std::size_t done = 0; done < bytes.size();) {
    const auto n = static_cast<std::uint32_t>(std::min<std::uint64_t>(kMaxRequest, bytes.size() - done));
    store_.read(bytes.data() + done, n, offset + done);
    done += n;
  }
}

bool store_holds_data(Store& store) {
  bool data = false;
  for (std::uint64_t offset = 0; offset < store.size() && !data;) {
    std::uint64_t next = offset;
    store.extents(offset, store.size() - offset, [&](const Extent& e) {
      if (!e.hole) data = true;
      next = e.offset + e.length;
    });
    if (next <= offset) break;
    offset = next;
  }
  return data;
}

void clear_store(Store& store) {
  for (std::uint64_t offset = 0; offset < store.size();) {
    const auto n = static_cast<std::uint32_t>(std::min<std::uint64_t>(kMaxRequest, store.size() - offset));
    store.trim(n, offset, true);
    offset += n;
  }
}

}  // namespace nvj
