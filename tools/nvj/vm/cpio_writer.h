// SPDX-License-Identifier: BSD-3-Clause
// CpioWriter: an archive in the "newc" format (cpio -H newc), the one the
// kernel unpacks as an initramfs. Written directly so that nvj vm needs no
// cpio program and can put device nodes in the archive without root.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

namespace nvj::cli {

class CpioWriter {
 public:
  // Creates (or truncates) `path`; throws std::runtime_error naming it.
  explicit CpioWriter(const std::filesystem::path& path);

  // Names are relative to the archive's root ("bin/busybox"). Parents must
  // be added before their entries, as the kernel creates them in order.
  void directory(const std::string& name, mode_t permissions = 0755);
  void file(const std::string& name, std::string_view data, mode_t permissions = 0644);
  void symlink(const std::string& name, const std::string& target);
  void char_device(const std::string& name, unsigned major, unsigned minor, mode_t permissions = 0600);

  // Writes the trailer and closes the file; throws if anything failed to
  // reach the disk.
  void finish();

  std::uint64_t bytes() const { return bytes_; }

 private:
  void entry(const std::string& name, mode_t mode, std::string_view data, unsigned rdev_major = 0,
             unsigned rdev_minor = 0);
  void write(std::string_view bytes);
  void pad();

  std::filesystem::path path_;
  std::ofstream out_;
  std::uint64_t bytes_ = 0;
  std::uint32_t next_inode_ = 1;
};

}  // namespace nvj::cli
