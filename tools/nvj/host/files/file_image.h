// SPDX-License-Identifier: BSD-3-Clause
// FileImage: an image file as fscore reads and writes it (BlockSource and
// BlockSink over pread/pwrite). Opening names the file in its errors.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "fscore/block_io.h"

namespace nvj::cli {

class FileImage final : public fscore::BlockSource, public fscore::BlockSink {
 public:
  enum class Mode { read_only, read_write };
  FileImage(std::string path, Mode mode);
  ~FileImage() override;
  FileImage(const FileImage&) = delete;
  FileImage& operator=(const FileImage&) = delete;

  std::uint64_t size() const override { return size_; }
  void read(std::uint64_t offset, std::span<std::uint8_t> bytes) const override;
  void write(std::uint64_t offset, std::span<const std::uint8_t> bytes) override;
  // fdatasync: what was written is on the disk.
  void sync();
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  int fd_ = -1;
  std::uint64_t size_ = 0;
};

}  // namespace nvj::cli
