// SPDX-License-Identifier: BSD-3-Clause
// A device image in memory for tests and the fuzz driver: both fscore's
// BlockSink and its BlockSource. Pages nobody wrote read as zeros and take
// no memory, so a gigabyte image costs what its metadata does.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <span>
#include <stdexcept>
#include <vector>

#include "fscore/block_io.h"

namespace nvj::test {

class SparseImage : public fscore::BlockSink, public fscore::BlockSource {
 public:
  explicit SparseImage(std::uint64_t size, std::size_t page_size = 4096) : size_(size), page_(page_size) {}

  void write(std::uint64_t offset, std::span<const std::uint8_t> bytes) override {
    if (offset > size_ || bytes.size() > size_ - offset) throw std::out_of_range("write past the end of the image");
    written_ += bytes.size();
    for (std::size_t done = 0; done < bytes.size();) {
      const std::uint64_t at = offset + done;
      auto [it, added] = pages_.try_emplace(at / page_);
      if (added) it->second.assign(page_, 0);
      const std::size_t in_page = static_cast<std::size_t>(at % page_);
      const std::size_t n = std::min(bytes.size() - done, page_ - in_page);
      std::copy_n(bytes.begin() + static_cast<std::ptrdiff_t>(done), n,
                  it->second.begin() + static_cast<std::ptrdiff_t>(in_page));
      done += n;
    }
  }

  std::uint64_t size() const override { return size_; }

  void read(std::uint64_t offset, std::span<std::uint8_t> bytes) const override {
    if (offset > size_ || bytes.size() > size_ - offset) throw std::out_of_range("read past the end of the image");
    ++reads_;
    for (std::size_t done = 0; done < bytes.size();) {
      const std::uint64_t at = offset + done;
      const std::size_t in_page = static_cast<std::size_t>(at % page_);
      const std::size_t n = std::min(bytes.size() - done, page_ - in_page);
      const auto it = pages_.find(at / page_);
      if (it == pages_.end()) {
        std::fill_n(bytes.begin() + static_cast<std::ptrdiff_t>(done), n, std::uint8_t{0});
      } else {
        std::copy_n(it->second.begin() + static_cast<std::ptrdiff_t>(in_page), n,
                    bytes.begin() + static_cast<std::ptrdiff_t>(done));
      }
      done += n;
    }
  }

  std::uint64_t bytes_written() const { return written_; }
  std::size_t reads() const { return reads_; }  // read() calls so far
  // Whether anything was written in [offset, offset + length).
  bool holds(std::uint64_t offset, std::uint64_t length) const {
    const auto it = pages_.lower_bound(offset / page_);
    return it != pages_.end() && it->first * page_ < offset + length;
  }
  std::size_t page_size() const { return page_; }
  // The pages written, by page number.
  const std::map<std::uint64_t, std::vector<std::uint8_t>>& pages() const { return pages_; }

 private:
  std::uint64_t size_;
  std::size_t page_;
  std::uint64_t written_ = 0;
  mutable std::size_t reads_ = 0;
  std::map<std::uint64_t, std::vector<std::uint8_t>> pages_;
};

}  // namespace nvj::test
