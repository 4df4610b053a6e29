// SPDX-License-Identifier: BSD-3-Clause
// Test support: a real nbdkit with the nvjournal plugin in a temporary folder,
// and libnbd handles to it. Everything is stopped and removed by destructors,
// also when an assertion fails.
//
// Environment: NVJ_PLUGIN picks the plugin (default: this build tree's);
// NVJ_TEST_PRELOAD is preloaded into nbdkit (default: the ASan runtime in a
// sanitized build, nothing otherwise).
#pragma once

#include <libnbd.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "common/control_client.h"
#include "common/json.h"
#include "tests/support/temp_dir.h"
#include "tools/nvj/host/files/text_file.h"
#include "tools/nvj/host/processes/process.h"
#include "tools/nvj/host/processes/server_process.h"

namespace nvj::test {

inline void write_text(const std::filesystem::path& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

inline std::vector<std::string> server_env() {
  std::vector<std::string> env;
  const char* preload = std::getenv("NVJ_TEST_PRELOAD");
  if (preload == nullptr) preload = NVJ_TEST_PRELOAD_DEFAULT;
  if (*preload != '\0') {
    env.push_back(std::string("LD_PRELOAD=") + preload);
    // nbdkit itself is not built with ASan: only report errors, not its leaks.
    env.emplace_back("ASAN_OPTIONS=detect_leaks=0:abort_on_error=1");
  }
  return env;
}

inline std::unique_ptr<cli::ServerProcess> start_server(const std::filesystem::path& dir,
                                                        std::vector<std::string> params,
                                                        std::vector<std::string> nbdkit_args = {}) {
  return std::make_unique<cli::ServerProcess>(
      cli::ServerOptions{dir, std::move(params), "", server_env(), std::move(nbdkit_args), false});
}

// The process whose command line names `socket` (a test's own temporary
// path), or 0: finds a background server whose pidfile never appeared, so
// that a failing test still stops it.
inline pid_t pid_of(const std::string& socket) {
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string name = entry.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    const std::string cmdline = cli::read_text_file(entry.path() / "cmdline");  // "" once gone
    if (cmdline.find(socket) != std::string::npos) return std::stoi(name);
  }
  return 0;
}

// nbdkit in its default mode, in `dir`: it binds DIR/nbd.sock, forks, and
// the parent exits (`parent`: its status and output); the child serves until
// stop(), at the latest when this goes, whatever the test found. The child
// writes its pidfile after the parent has exited: the constructor waits for
// a whole line (up to 10 s); without one, the child is the process whose
// command line names the socket.
struct ForkedServer {
  ForkedServer(const TempDir& dir, const std::vector<std::string>& params) {
    const std::string pidfile = dir.file("nbdkit.pid");
    std::vector<std::string> argv{"nbdkit", "-U", dir.file("nbd.sock"), "-P", pidfile,
                                  cli::ServerProcess::default_plugin()};
    argv.insert(argv.end(), params.begin(), params.end());
    parent = cli::run(argv, server_env(), std::chrono::seconds(30));
    for (int i = 0; i < 200; ++i) {
      if (std::filesystem::exists(pidfile)) pid_line = cli::read_text_file(pidfile);
      if (!pid_line.empty() && pid_line.back() == '\n') break;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    pid = pid_line.empty() || pid_line.back() != '\n' ? pid_of(dir.file("nbd.sock")) : std::stoi(pid_line);
  }
  ~ForkedServer() { stop(std::chrono::seconds(5)); }
  ForkedServer(const ForkedServer&) = delete;
  ForkedServer& operator=(const ForkedServer&) = delete;

  // SIGTERM, and up to `grace` for it to exit: true once the child is gone.
  bool stop(std::chrono::milliseconds grace) {
    if (pid <= 0) return true;
    ::kill(pid, SIGTERM);
    for (auto waited = std::chrono::milliseconds(0); waited < grace && ::kill(pid, 0) == 0;
         waited += std::chrono::milliseconds(50))
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    return ::kill(std::exchange(pid, -1), 0) != 0;
  }

  cli::RunResult parent;
  std::string pid_line;  // the pidfile's, as read
  pid_t pid = 0;
};

using Handle = std::unique_ptr<nbd_handle, decltype(&nbd_close)>;

// The handle sends byte ranges that are not whole sectors too (libnbd
// refuses them by default, the exports advertising a minimum block size):
// the server serves any range, and the tests check that it does.
inline Handle connect(const cli::ServerProcess& server, const std::string& export_name) {
  Handle h(nbd_create(), &nbd_close);
  if (!h) throw std::runtime_error(nbd_get_error());
  nbd_set_strict_mode(h.get(), static_cast<std::uint32_t>(nbd_get_strict_mode(h.get())) & ~LIBNBD_STRICT_ALIGN);
  nbd_add_meta_context(h.get(), LIBNBD_CONTEXT_BASE_ALLOCATION);
  if (nbd_connect_uri(h.get(), server.uri(export_name).c_str()) == -1)
    throw std::runtime_error(std::string("connect: ") + nbd_get_error());
  return h;
}

// A control API answer of 200, parsed (anything else throws, with the answer).
inline Json control_json(const std::string& socket, const std::string& method, const std::string& target) {
  return parse_json(control_call(socket, method, target), method + " " + target);
}

// A TCP port free at `address` now (the kernel's pick for port 0), or 0 if
// nothing binds there (no IPv6, say). Another process may take it before the
// caller binds it: callers retry with another on "Address already in use".
inline std::uint16_t free_tcp_port(const std::string& address = "127.0.0.1") {
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  if (::getaddrinfo(address.c_str(), "0", &hints, &found) != 0) return 0;
  const int fd = ::socket(found->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  std::uint16_t port = 0;
  sockaddr_storage bound{};
  socklen_t length = sizeof bound;
  if (fd >= 0 && ::bind(fd, found->ai_addr, found->ai_addrlen) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &length) == 0)
    port = ntohs(bound.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port
                                             : reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
  if (fd >= 0) ::close(fd);
  ::freeaddrinfo(found);
  return port;
}

// Sends `raw` on a connected socket, reads until the server closes (at most
// 15 s without a byte) and closes it: the raw answer. The server may close
// early on a request it refuses, so a short send is not an error.
inline std::string exchange_on(int fd, const std::string& raw) {
  std::size_t sent = 0;
  while (sent < raw.size()) {
    const ssize_t n = ::send(fd, raw.data() + sent, raw.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) break;
    sent += static_cast<std::size_t>(n);
  }
  std::string reply;
  char buf[4096];
  pollfd p{fd, POLLIN, 0};
  while (::poll(&p, 1, 15000) > 0) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n <= 0) break;
    reply.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fd);
  return reply;
}

// An HTTP/1.1 request without a body, as the control and metrics listeners take it.
inline std::string http_request(const std::string& method, const std::string& target) {
  return method + " " + target + " HTTP/1.1\r\nHost: lab\r\nContent-Length: 0\r\n\r\n";
}

// The body of a raw HTTP answer; throws if it has no end of headers.
inline std::string http_body(const std::string& reply) {
  const std::size_t end = reply.find("\r\n\r\n");
  if (end == std::string::npos) throw std::runtime_error("not an HTTP answer: " + reply.substr(0, 200));
  return reply.substr(end + 4);
}

// Sends `raw` to address:port over TCP: the raw answer, "" if it cannot connect.
inline std::string tcp_exchange(const std::string& address, std::uint16_t port, const std::string& raw) {
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  if (::getaddrinfo(address.c_str(), std::to_string(port).c_str(), &hints, &found) != 0) return "";
  const int fd = ::socket(found->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  const bool connected = fd >= 0 && ::connect(fd, found->ai_addr, found->ai_addrlen) == 0;
  ::freeaddrinfo(found);
  if (connected) return exchange_on(fd, raw);
  if (fd >= 0) ::close(fd);
  return "";
}

// METHOD TARGET over TCP, the raw answer.
inline std::string tcp_request(const std::string& address, std::uint16_t port, const std::string& method,
                               const std::string& target) {
  return tcp_exchange(address, port, http_request(method, target));
}

}  // namespace nvj::test
