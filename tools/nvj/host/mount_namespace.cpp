#include "tools/nvj/host/mount_namespace.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <stdexcept>
#include <thread>

namespace nvj::cli {

bool enter_private_mount_namespace(std::string& why) {
  static bool entered = false;
  if (entered) return true;
  if (::unshare(CLONE_NEWNS) != 0) {
    why = std::string("unshare(CLONE_NEWNS): ") + std::strerror(errno);
    return false;
  }
  // Private from the root down: a mount made here must not reach the
  // namespace we left through shared propagation.
  if (::mount("none", "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) {
    why = std::string("making the new mount namespace private: ") + std::strerror(errno);
    return false;  // in a namespace of our own, yet still propagating: as before
  }
  entered = true;
  return true;
}

void wait_until_released(const std::vector<std::string>& devices, int timeout_ms) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  for (const std::string& device : devices) {
    for (;;) {
      const int fd = ::open(device.c_str(), O_RDONLY | O_EXCL | O_CLOEXEC);
      if (fd >= 0) {
        ::close(fd);
        break;
      }
      if (errno != EBUSY) throw std::runtime_error("open " + device + ": " + std::strerror(errno));
      if (std::chrono::steady_clock::now() >= deadline)
        throw std::runtime_error(device + " is still held " + std::to_string(timeout_ms / 1000) +
                                 " s after unmounting it: is the filesystem mounted in another mount namespace?");
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
}

}  // namespace nvj::cli
