// SPDX-License-Identifier: BSD-3-Clause
// AppendFile: a new file written front to back, as a recording is. Where
// the filesystem allows it the file is written with O_DIRECT, in whole
// aligned blocks, so the bytes do not pass through the page cache (writing
// a recording through it cost more CPU than the rest of the recording:
// bench/RESULTS.md, record_cost); elsewhere (tmpfs, or when asked) through
// the page cache, in the same writes. Two ways in: append() takes bytes of
// any length and gathers them in a buffer of whole blocks (the recording's
// start); append_blocks() writes whole blocks from the caller's aligned
// memory as they are (the recording's batches). finish() writes the last
// partial block, gives the file its exact size and syncs it. A file that is
// never finished holds whole blocks only: a reader finds it truncated.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace nvj {

class AppendFile {
 public:
  static constexpr std::size_t kBlock = 4096;
  static constexpr std::size_t kBuffer = std::size_t{1} << 20;

  // Creates `path`; an existing file is refused. Throws
  // std::invalid_argument naming the path and the reason.
  AppendFile(const std::string& path, bool direct);
  ~AppendFile();
  AppendFile(const AppendFile&) = delete;
  AppendFile& operator=(const AppendFile&) = delete;

  // Throws IoError (server/store/io_error.h) naming the file.
  void append(const void* data, std::size_t length);
  // `length` a multiple of kBlock, `data` aligned to kBlock, and what was
  // appended before ends on a block (std::logic_error if not).
  void append_blocks(const void* data, std::size_t length);
  // Ends the file at `size` bytes: size(), or less to cut off zeroes that
  // filled the last block of append_blocks.
  void finish(std::uint64_t size);
  void finish() { finish(size()); }

  bool direct() const { return direct_; }
  std::uint64_t size() const { return written_ + filled_; }

 private:
  void write_at_end(const std::uint8_t* data, std::size_t length);  // at written_

  std::string path_;
  int fd_ = -1;
  bool direct_ = false;
  bool finished_ = false;
  std::uint64_t written_ = 0;  // bytes on the file, a multiple of kBlock until finish()
  std::size_t filled_ = 0;     // bytes waiting in the buffer
  struct Free {
    void operator()(void* p) const;
  };
  std::unique_ptr<std::uint8_t, Free> buffer_;  // kBuffer bytes, aligned to kBlock
};

}  // namespace nvj
