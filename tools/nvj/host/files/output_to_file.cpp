// SPDX-License-Identifier: BSD-3-Clause
#include "tools/nvj/host/files/output_to_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>

namespace nvj::cli {

OutputToFile::OutputToFile(const std::filesystem::path& file) {
  std::fflush(stdout);
  std::fflush(stderr);
  const int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw std::runtime_error("open " + file.string() + ": " + std::strerror(errno));
  saved_out_ = ::dup(STDOUT_FILENO);
  saved_err_ = ::dup(STDERR_FILENO);
  if (saved_out_ < 0 || saved_err_ < 0) {
    const int error = errno;
    ::close(fd);
    if (saved_out_ >= 0) ::close(saved_out_);
    if (saved_err_ >= 0) ::close(saved_err_);
    throw std::runtime_error(std::string("dup stdout, stderr: ") + std::strerror(error));
  }
  ::dup2(fd, STDOUT_FILENO);
  ::dup2(fd, STDERR_FILENO);
  ::close(fd);
}

OutputToFile::~OutputToFile() {
  std::fflush(stdout);
  std::fflush(stderr);
  ::dup2(saved_out_, STDOUT_FILENO);
  ::dup2(saved_err_, STDERR_FILENO);
  ::close(saved_out_);
  ::close(saved_err_);
}

}  // namespace nvj::cli
