// SPDX-License-Identifier: BSD-3-Clause
// MappedFile: a whole file mapped read-only (a recording), its bytes as a
// span for the readers in fscore. Opening names the file in its errors.
#pragma once

#include <cstdint>
#include <span>
#include <string>

namespace nvj::cli {

class MappedFile {
 public:
  // Throws std::runtime_error naming the path and the reason.
  explicit MappedFile(const std::string& path);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  std::span<const std::uint8_t> bytes() const { return {data_, size_}; }

 private:
  const std::uint8_t* data_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace nvj::cli
