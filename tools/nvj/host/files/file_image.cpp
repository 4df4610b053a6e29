// SPDX-License-Identifier: BSD-3-Clause
#include "tools/nvj/host/files/file_image.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <stdexcept>
#include <system_error>

namespace nvj::cli {
namespace {

[[noreturn]] void fail(const std::string& what) { throw std::system_error(errno, std::generic_category(), what); }

}  // namespace

FileImage::FileImage(std::string path, Mode mode) : path_(std::move(path)) {
  fd_ = ::open(path_.c_str(), (mode == Mode::read_only ? O_RDONLY : O_RDWR) | O_CLOEXEC);
  if (fd_ < 0) fail(path_);
  struct stat st {};
  if (::fstat(fd_, &st) != 0) fail(path_);
  if (S_ISBLK(st.st_mode)) {
    const off_t end = ::lseek(fd_, 0, SEEK_END);
    if (end < 0) fail(path_);
    size_ = static_cast<std::uint64_t>(end);
  } else if (S_ISREG(st.st_mode)) {
    size_ = static_cast<std::uint64_t>(st.st_size);
  } else {
    ::close(fd_);
    throw std::runtime_error(path_ + ": not a regular file or a block device");
  }
}

FileImage::~FileImage() {
  if (fd_ >= 0) ::close(fd_);
}

void FileImage::read(std::uint64_t offset, std::span<std::uint8_t> bytes) const {
  if (offset > size_ || bytes.size() > size_ - offset)
    throw std::runtime_error(path_ + ": a read past the end of the image (offset " + std::to_string(offset) + ")");
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::pread(fd_, bytes.data() + done, bytes.size() - done, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail(path_);
    if (n == 0) throw std::runtime_error(path_ + ": the image ended early");
    done += static_cast<std::size_t>(n);
  }
}

void FileImage::write(std::uint64_t offset, std::span<const std::uint8_t> bytes) {
  if (offset > size_ || bytes.size() > size_ - offset)
    throw std::runtime_error(path_ + ": a write past the end of the image (offset " + std::to_string(offset) + ")");
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::pwrite(fd_, bytes.data() + done, bytes.size() - done, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail(path_);
    done += static_cast<std::size_t>(n);
  }
}

void FileImage::sync() {
  if (::fdatasync(fd_) != 0) fail(path_);
}

}  // namespace nvj::cli
