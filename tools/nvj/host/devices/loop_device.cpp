// SPDX-License-Identifier: BSD-3-Clause
#include "tools/nvj/host/devices/loop_device.h"

#include "common/errno_name.h"
#include "common/unique_fd.h"

#include <fcntl.h>
#include <linux/fs.h>
#include <linux/loop.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <thread>
#include <vector>

namespace nvj::cli {
namespace {

// The pages of the device's contents the host holds in its cache, by
// mincore() over a read-only mapping, 1 GiB at a time.
std::uint64_t cached_pages(int fd, const std::string& device) {
  std::uint64_t size = 0;
  if (::ioctl(fd, BLKGETSIZE64, &size) != 0) throw errno_error("the size of " + device);
  const std::uint64_t page = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
  constexpr std::uint64_t kWindow = std::uint64_t{1} << 30;
  std::vector<unsigned char> in_core;
  std::uint64_t cached = 0;
  for (std::uint64_t at = 0; at < size; at += kWindow) {
    const std::uint64_t length = std::min(kWindow, size - at);
    void* map = ::mmap(nullptr, length, PROT_READ, MAP_SHARED, fd, static_cast<off_t>(at));
    if (map == MAP_FAILED) throw errno_error("map " + device);
    in_core.assign((length + page - 1) / page, 0);
    const int rc = ::mincore(map, length, in_core.data());
    const int saved = errno;
    ::munmap(map, length);
    errno = saved;
    if (rc != 0) throw errno_error("mincore " + device);
    for (const unsigned char c : in_core) cached += c & 1;
  }
  return cached;
}

// Makes /dev/loopN if the container's /dev lacks it (udev is not always there).
void ensure_node(const std::string& path, int n) {
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) return;
  if (::mknod(path.c_str(), S_IFBLK | 0600, makedev(7, static_cast<unsigned>(n))) != 0 && errno != EEXIST)
    throw errno_error("mknod " + path);
}

}  // namespace

std::string loop_attach(const std::string& file, bool direct_io, unsigned sector_size) {
  UniqueFd backing(::open(file.c_str(), O_RDWR | O_CLOEXEC));
  if (backing.get() < 0) throw errno_error("open " + file);
  UniqueFd control(::open("/dev/loop-control", O_RDWR | O_CLOEXEC));
  if (control.get() < 0) throw errno_error("open /dev/loop-control (are loop devices available?)");

  // Another process may take the free device between GET_FREE and CONFIGURE:
  // then ask again.
  for (int attempt = 0; attempt < 20; ++attempt) {
    const int n = ::ioctl(control.get(), LOOP_CTL_GET_FREE);
    if (n < 0) throw errno_error("LOOP_CTL_GET_FREE");
    const std::string device = "/dev/loop" + std::to_string(n);
    ensure_node(device, n);
    UniqueFd loop(::open(device.c_str(), O_RDWR | O_CLOEXEC));
    if (loop.get() < 0) throw errno_error("open " + device);
    loop_config config{};
    config.fd = static_cast<__u32>(backing.get());
    config.block_size = sector_size;
    config.info.lo_flags = direct_io ? LO_FLAGS_DIRECT_IO : 0;  // not autoclear: the device stays until detach
    std::strncpy(reinterpret_cast<char*>(config.info.lo_file_name), file.c_str(), LO_NAME_SIZE - 1);
    if (::ioctl(loop.get(), LOOP_CONFIGURE, &config) == 0) return device;
    if (errno != EBUSY)
      throw errno_error("LOOP_CONFIGURE " + device + " with " + file + (direct_io ? " (direct I/O)" : "") + ", " +
                      std::to_string(sector_size) + "-byte sectors");
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  throw std::runtime_error("no free loop device could be bound to " + file);
}

void loop_detach(const std::string& device) {
  UniqueFd loop(::open(device.c_str(), O_RDWR | O_CLOEXEC));
  if (loop.get() < 0) throw errno_error("open " + device);
  // The kernel answers EBUSY while the device is still being released by a
  // just-finished umount; give it a moment.
  for (int attempt = 0;; ++attempt) {
    if (::ioctl(loop.get(), LOOP_CLR_FD, 0) == 0 || errno == ENXIO) return;
    if (errno != EBUSY || attempt == 50) throw errno_error("detach " + device);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

bool loop_remove(const std::string& device) {
  UniqueFd control(::open("/dev/loop-control", O_RDWR | O_CLOEXEC));
  if (control.get() < 0) throw errno_error("open /dev/loop-control");
  const int n = std::stoi(device.substr(device.rfind("loop") + 4));
  // udev, or blkid, may still be looking at the just-released device.
  for (int attempt = 0; attempt < 50; ++attempt) {
    if (::ioctl(control.get(), LOOP_CTL_REMOVE, n) == 0 || errno == ENODEV) return true;
    if (errno != EBUSY) throw errno_error("remove " + device);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

std::uint64_t cached_pages(const std::string& device) {
  UniqueFd fd(::open(device.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) throw errno_error("open " + device);
  return cached_pages(fd.get(), device);
}

void drop_block_cache(const std::string& device) {
  UniqueFd fd(::open(device.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) throw errno_error("flush the cache of " + device);
  // BLKFLSBUF drops only the pages nothing holds at that moment, and says
  // nothing of the others: a page some passing reference kept (reclaim,
  // compaction) would serve the old contents to the next mount. Dropped
  // again until mincore() finds none.
  constexpr int kTries = 20;
  std::uint64_t left = 0;
  for (int attempt = 1; attempt <= kTries; ++attempt) {
    if (::ioctl(fd.get(), BLKFLSBUF, 0) != 0) throw errno_error("flush the cache of " + device);
    left = cached_pages(fd.get(), device);
    if (left == 0) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(5 * attempt));
  }
  throw std::runtime_error("flush the cache of " + device + ": " + std::to_string(left) + " pages stay cached after " +
                           std::to_string(kTries) + " flushes (something holds them; the next read would see the old contents)");
}

std::string loop_backing_file(const std::string& device) {
  const std::string name = device.substr(device.rfind('/') + 1);
  std::ifstream in("/sys/block/" + name + "/loop/backing_file");
  std::string path;
  std::getline(in, path);
  return path;
}

}  // namespace nvj::cli
