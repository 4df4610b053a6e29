// SPDX-License-Identifier: BSD-3-Clause
#include "tools/nvj/host/files/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include <cerrno>
#include <stdexcept>

#include "common/errno_name.h"
#include "common/unique_fd.h"

namespace nvj::cli {

MappedFile::MappedFile(const std::string& path) {
  const UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) throw std::runtime_error("cannot open " + path + ": " + errno_message(errno));
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) throw std::runtime_error("cannot stat " + path + ": " + errno_message(errno));
  if (!S_ISREG(st.st_mode)) throw std::runtime_error(path + " is not a regular file");
  size_ = static_cast<std::size_t>(st.st_size);
  if (size_ == 0) return;
  void* p = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd.get(), 0);
  if (p == MAP_FAILED) throw std::runtime_error("cannot map " + path + ": " + errno_message(errno));
  data_ = static_cast<const std::uint8_t*>(p);
}

MappedFile::~MappedFile() {
  if (data_ != nullptr) ::munmap(const_cast<std::uint8_t*>(data_), size_);
}

}  // namespace nvj::cli
