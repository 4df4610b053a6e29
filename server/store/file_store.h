// SPDX-License-Identifier: BSD-3-Clause
// FileStore: an export backed by a regular file, so it survives the server.
//
// Durability: plain writes go to the page cache; flush() is fdatasync(). A
// durable write goes through a second descriptor opened with O_DSYNC, so it is
// on stable storage when it returns without syncing anyone else's writes.
// Trim and zero punch holes (the file stays sparse); extents come from
// SEEK_DATA/SEEK_HOLE.
//
// The file is locked (flock, exclusive) while open: two servers, or two
// exports of one server, never share a file by accident.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "server/store/store.h"

namespace nvj {

class FileStore final : public Store {
 public:

  // Opens `path`, creating it (sparse, mode 0644) with `size` bytes if it does
  // not exist. An existing file is never truncated: if `size` is given and the
  // file is smaller it is extended; if it is larger, that is an error. With no
  // size the file's own size is used. Throws std::runtime_error whose message
  // says what is wrong with the file, without its path (the caller names the
  // parameter and the path).
  static std::unique_ptr<FileStore> open(const std::string& path, std::optional<std::uint64_t> size,
                                         std::uint64_t default_size);

  ~FileStore() override;

  std::uint64_t size() const override { return size_; }
  void read(void* buf, std::uint32_t count, std::uint64_t offset) override;
  void write(const void* buf, std::uint32_t count, std::uint64_t offset, bool durable) override;
  void zero(std::uint32_t count, std::uint64_t offset, bool durable) override;
  void trim(std::uint32_t count, std::uint64_t offset, bool durable) override;
  void flush() override;
  void extents(std::uint64_t offset, std::uint64_t count, const ExtentSink& sink) override;
  bool persistent() const override { return true; }
  std::string describe() const override;

  const std::string& path() const { return path_; }
  bool created() const { return created_; }

 private:
  FileStore(std::string path, int fd, int dsync_fd, std::uint64_t size, bool created);
  void punch(std::uint32_t count, std::uint64_t offset, bool durable);

  const std::string path_;
  const int fd_;
  const int dsync_fd_;
  const std::uint64_t size_;
  const bool created_;
};

}  // namespace nvj
