// SPDX-License-Identifier: BSD-3-Clause
#include "tools/nvj/host/devices/detached_mount.h"

#include <fcntl.h>
#include <sys/mount.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

namespace nvj::cli {

namespace {

// The messages the filesystem left on its context ("e ext4: ..."), joined.
std::string context_messages(int fs) {
  std::string all;
  char line[1024];
  for (;;) {
    const ssize_t n = ::read(fs, line, sizeof line - 1);
    if (n <= 0) break;
    std::string text(line, static_cast<std::size_t>(n));
    if (text.size() > 2 && text[1] == ' ') text.erase(0, 2);
    all += (all.empty() ? "" : "; ") + text;
  }
  return all;
}

}  // namespace

DetachedMount::DetachedMount(const std::string& filesystem, const std::string& device, const std::string& options) {
  const UniqueFd context(::fsopen(filesystem.c_str(), FSOPEN_CLOEXEC));
  const int fs = context.get();
  if (fs < 0) {
    std::string why = "fsopen ";
    why.append(filesystem).append(": ").append(std::strerror(errno));
    throw std::runtime_error(why);
  }
  const auto refuse = [&](const std::string& step) {
    const int error = errno;
    std::string why = step;
    why.append(": ").append(std::strerror(error));
    if (const std::string told = context_messages(fs); !told.empty()) why.append(" (").append(told).append(")");
    throw MountRefused(why);
  };
  if (::fsconfig(fs, FSCONFIG_SET_STRING, "source", device.c_str(), 0) != 0) refuse("source " + device);
  for (std::size_t at = 0; at < options.size();) {
    const std::size_t end = std::min(options.find(',', at), options.size());
    const std::string option = options.substr(at, end - at);
    at = end + 1;
    if (option.empty()) continue;
    const std::size_t eq = option.find('=');
    const int done = eq == std::string::npos
                         ? ::fsconfig(fs, FSCONFIG_SET_FLAG, option.c_str(), nullptr, 0)
                         : ::fsconfig(fs, FSCONFIG_SET_STRING, option.substr(0, eq).c_str(),
                                      option.substr(eq + 1).c_str(), 0);
    if (done != 0) refuse("option " + option);
  }
  if (::fsconfig(fs, FSCONFIG_CMD_CREATE, nullptr, nullptr, 0) != 0) refuse("mount " + device);
  mount_.reset(::fsmount(fs, FSMOUNT_CLOEXEC, 0));
  if (!mount_.valid()) refuse("fsmount " + device);
}

std::filesystem::path DetachedMount::root() const { return "/proc/self/fd/" + std::to_string(mount_.get()); }

void wait_until_released(const std::vector<std::string>& devices, int timeout_ms) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  for (const std::string& device : devices) {
    for (;;) {
      if (UniqueFd(::open(device.c_str(), O_RDONLY | O_EXCL | O_CLOEXEC)).valid()) break;
      if (errno != EBUSY) throw std::runtime_error("open " + device + ": " + std::strerror(errno));
      if (std::chrono::steady_clock::now() >= deadline)
        throw std::runtime_error(device + " is still held " + std::to_string(timeout_ms / 1000) +
                                 " s after unmounting it: is the filesystem mounted in another mount namespace?");
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
}

}  // namespace nvj::cli
