// SPDX-License-Identifier: BSD-3-Clause
#include "server/record/append_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstdint>
#include <cstring>
#include <stdexcept>

#include "server/store/io_error.h"

namespace nvj {

void AppendFile::Free::operator()(void* p) const { std::free(p); }

AppendFile::AppendFile(const std::string& path, bool direct) : path_(path) {
  const int flags = O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC;
  fd_ = ::open(path.c_str(), flags | (direct ? O_DIRECT : 0), 0644);
  direct_ = direct && fd_ >= 0;
  if (fd_ < 0 && direct && errno == EINVAL) fd_ = ::open(path.c_str(), flags, 0644);  // tmpfs: no O_DIRECT
  if (fd_ < 0) {
    const int err = errno;
    if (err == EEXIST) throw std::invalid_argument(path + " exists: a recording never overwrites a file");
    throw std::invalid_argument("cannot create " + path + ": " + errno_text(err));
  }
  void* p = nullptr;
  if (posix_memalign(&p, kBlock, kBuffer) != 0) {
    ::close(fd_);
    ::unlink(path.c_str());
    throw std::bad_alloc();
  }
  buffer_.reset(static_cast<std::uint8_t*>(p));
}

AppendFile::~AppendFile() {
  if (fd_ >= 0) ::close(fd_);
}

void AppendFile::write_at_end(const std::uint8_t* data, std::size_t length) {
  for (std::size_t done = 0; done < length;) {
    const ssize_t n = ::pwrite(fd_, data + done, length - done, static_cast<off_t>(written_));
    if (n < 0) {
      if (errno == EINTR) continue;
      throw IoError(errno, "writing " + path_);
    }
    if (n == 0) throw IoError(ENOSPC, "writing " + path_);
    // O_DIRECT writes whole blocks or fail; a short one ends on a block.
    done += static_cast<std::size_t>(n);
    written_ += static_cast<std::uint64_t>(n);
  }
}

void AppendFile::append(const void* data, std::size_t length) {
  const auto* bytes = static_cast<const std::uint8_t*>(data);
  while (length > 0) {
    const std::size_t n = std::min(length, kBuffer - filled_);
    std::memcpy(buffer_.get() + filled_, bytes, n);
    filled_ += n;
    bytes += n;
    length -= n;
    if (filled_ == kBuffer) {
      write_at_end(buffer_.get(), kBuffer);
      filled_ = 0;
    }
  }
}

void AppendFile::append_blocks(const void* data, std::size_t length) {
  if (filled_ % kBlock != 0 || length % kBlock != 0 || reinterpret_cast<std::uintptr_t>(data) % kBlock != 0)
    throw std::logic_error("AppendFile::append_blocks: not whole, aligned blocks");
  if (filled_ > 0) {
    write_at_end(buffer_.get(), filled_);
    filled_ = 0;
  }
  write_at_end(static_cast<const std::uint8_t*>(data), length);
}

void AppendFile::finish(std::uint64_t size) {
  if (finished_) return;
  finished_ = true;
  if (size > written_ + filled_) throw std::logic_error("AppendFile::finish: past the end");
  if (filled_ > 0) {
    // The last block padded with zeroes (O_DIRECT writes whole blocks).
    const std::size_t padded = (filled_ + kBlock - 1) / kBlock * kBlock;
    std::memset(buffer_.get() + filled_, 0, padded - filled_);
    write_at_end(buffer_.get(), direct_ ? padded : filled_);
    filled_ = 0;
  }
  if (written_ != size) {
    if (::ftruncate(fd_, static_cast<off_t>(size)) != 0) throw IoError(errno, "truncating " + path_);
    written_ = size;
  }
  if (::fdatasync(fd_) != 0) throw IoError(errno, "syncing " + path_);
  ::close(fd_);
  fd_ = -1;
}

}  // namespace nvj
