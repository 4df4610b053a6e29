// SPDX-License-Identifier: BSD-3-Clause
#include "tools/nvj/vm/cpio_writer.h"

#include <sys/stat.h>

#include <cstdio>
#include <stdexcept>

namespace nvj::cli {

CpioWriter::CpioWriter(const std::filesystem::path& path)
    : path_(path), out_(path, std::ios::binary | std::ios::trunc) {
  if (!out_) throw std::runtime_error("cannot create " + path.string());
}

void CpioWriter::directory(const std::string& name, mode_t permissions) { entry(name, S_IFDIR | permissions, {}); }

void CpioWriter::file(const std::string& name, std::string_view data, mode_t permissions) {
  entry(name, S_IFREG | permissions, data);
}

void CpioWriter::symlink(const std::string& name, const std::string& target) { entry(name, S_IFLNK | 0777, target); }

void CpioWriter::char_device(const std::string& name, unsigned major, unsigned minor, mode_t permissions) {
  entry(name, S_IFCHR | permissions, {}, major, minor);
}

void CpioWriter::finish() {
  entry("TRAILER!!!", 0, {});
  out_.close();
  if (!out_) throw std::runtime_error("cannot write " + path_.string());
}

void CpioWriter::entry(const std::string& name, mode_t mode, std::string_view data, unsigned rdev_major,
                       unsigned rdev_minor) {
  if (data.size() > 0xffffffffu) throw std::runtime_error(name + ": too large for a cpio archive");
  // The header: magic, then thirteen fields of eight hex digits. Owner root,
  // time 0: the archive depends only on its contents.
  const unsigned long fields[13] = {
      name == "TRAILER!!!" ? 0ul : next_inode_++,
      mode,
      0,  // uid
      0,  // gid
      (mode & S_IFMT) == S_IFDIR ? 2ul : 1ul,
      0,  // mtime
      data.size(),
      0,  // device of the file (major, minor)
      0,
      rdev_major,
      rdev_minor,
      name.size() + 1,  // with its NUL
      0,                // checksum, unused by newc
  };
  char header[6 + 13 * 8 + 1];
  int n = std::snprintf(header, sizeof header, "070701");
  for (const unsigned long f : fields) n += std::snprintf(header + n, sizeof header - static_cast<std::size_t>(n), "%08lX", f);
  write(std::string_view(header, static_cast<std::size_t>(n)));
  write(name);
  write(std::string_view("\0", 1));
  pad();
  write(data);
  pad();
}

void CpioWriter::write(std::string_view bytes) {
  out_.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  bytes_ += bytes.size();
}

// Header plus name, and the data, each end on a multiple of four bytes.
void CpioWriter::pad() {
  static constexpr char zeroes[4] = {};
  if (const std::uint64_t rest = bytes_ % 4; rest != 0) write(std::string_view(zeroes, 4 - rest));
}

}  // namespace nvj::cli
