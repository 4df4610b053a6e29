// SPDX-License-Identifier: BSD-3-Clause
#include "tools/nvj/vm/fact_relay.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include "common/mark_client.h"
#include "common/unique_fd.h"

namespace nvj::cli {

FactRelay::FactRelay(std::filesystem::path serial_socket, std::string control, LabHandler lab)
    : socket_(std::move(serial_socket)), control_(std::move(control)), lab_(std::move(lab)), thread_([this] { run(); }) {}

FactRelay::~FactRelay() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
}

std::string FactRelay::error() const {
  std::lock_guard lock(mutex_);
  return error_;
}

void FactRelay::finish(std::chrono::milliseconds wait) {
  const auto deadline = std::chrono::steady_clock::now() + wait;
  while (thread_.joinable() && std::chrono::steady_clock::now() < deadline && !stop_) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  stop_ = true;
  if (thread_.joinable()) thread_.join();
}

void FactRelay::run() {
  const auto set_error = [this](const std::string& what) {
    std::lock_guard lock(mutex_);
    if (error_.empty()) error_ = what;
  };
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  const std::string path = socket_.string();
  if (path.size() >= sizeof address.sun_path) {
    set_error("the serial line's socket path is too long: " + path);
    stop_ = true;
    return;
  }
  std::memcpy(address.sun_path, path.c_str(), path.size() + 1);
  UniqueFd fd;
  while (!stop_) {  // until QEMU has made the socket
    fd = UniqueFd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (::connect(fd.get(), reinterpret_cast<const sockaddr*>(&address), sizeof address) == 0) break;
    fd = UniqueFd();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  std::string pending;
  char buffer[4096];
  while (fd.valid()) {
    pollfd p{fd.get(), POLLIN, 0};
    const int ready = ::poll(&p, 1, 50);
    if (ready < 0 && errno == EINTR) continue;
    if (ready == 0) {
      if (stop_) break;
      continue;
    }
    const ssize_t n = ::read(fd.get(), buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // QEMU has gone
    pending.append(buffer, static_cast<std::size_t>(n));
    for (std::size_t end; (end = pending.find('\n')) != std::string::npos;) {
      std::string line = pending.substr(0, end);
      pending.erase(0, end + 1);
      while (!line.empty() && (line.back() == '\r' || line.back() == '\0')) line.pop_back();
      const std::size_t at = line.find(kSerialMarkPrefix);  // a tty may put noise before it
      const std::size_t lab_at = lab_ ? line.find(kSerialLabPrefix) : std::string::npos;
      if (at == std::string::npos && lab_at == std::string::npos) {
        if (!line.empty()) ++ignored_;
        continue;
      }
      std::string answer = std::string(kSerialMarked) + "\n";
      try {
        if (lab_at != std::string::npos && (at == std::string::npos || lab_at < at)) {
          lab_(std::string_view(line).substr(lab_at + kSerialLabPrefix.size()));
        } else {
          post_escaped_mark(control_, std::string_view(line).substr(at + kSerialMarkPrefix.size()));
          ++relayed_;
        }
      } catch (const std::exception& e) {
        set_error(e.what());
        std::string why = e.what();
        for (char& c : why)
          if (c == '\n' || c == '\r') c = ' ';
        answer = std::string(kSerialRefused) + why + "\n";
      }
      // The guest waits for it: it goes on only once the mark is posted.
      for (std::size_t sent = 0; sent < answer.size();) {
        const ssize_t w = ::send(fd.get(), answer.data() + sent, answer.size() - sent, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) break;  // the line has closed: nobody is waiting
        sent += static_cast<std::size_t>(w);
      }
    }
  }
  stop_ = true;
}

}  // namespace nvj::cli
