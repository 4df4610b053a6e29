// SPDX-License-Identifier: BSD-3-Clause
#include "tools/nvj/host/files/scratch_parent.h"

#include <linux/magic.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>

namespace nvj::cli {

namespace {

constexpr std::uint64_t kLeastFree = std::uint64_t{2} << 30;

bool roomy_tmpfs(const char* path) {
  struct statfs s {};
  if (::statfs(path, &s) != 0 || s.f_type != TMPFS_MAGIC || ::access(path, W_OK) != 0) return false;
  return static_cast<std::uint64_t>(s.f_bavail) * static_cast<std::uint64_t>(s.f_bsize) >= kLeastFree;
}

}  // namespace

std::string default_scratch_parent() {
  const char* tmp = std::getenv("TMPDIR");
  if (tmp != nullptr && *tmp != '\0') return tmp;
  if (roomy_tmpfs("/dev/shm")) return "/dev/shm";
  return "/tmp";
}

}  // namespace nvj::cli
