#include "tools/nvj/client/control_client.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace nvj::cli {

ControlResponse control_request(const std::string& socket, const std::string& method, const std::string& target) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (socket.size() >= sizeof addr.sun_path) throw std::runtime_error(socket + ": too long for a Unix socket");
  socket.copy(addr.sun_path, socket.size());
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw std::runtime_error(std::string("socket: ") + std::strerror(errno));
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    const int err = errno;
    ::close(fd);
    throw std::runtime_error("cannot reach the control socket " + socket + ": " + std::strerror(err) +
                             " (is the server running with control=" + socket + "?)");
  }
  const std::string request =
      method + " " + target + " HTTP/1.1\r\nHost: nvjournal\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
  std::string reply;
  bool ok = ::send(fd, request.data(), request.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(request.size());
  char buf[8192];
  pollfd p{fd, POLLIN, 0};
  while (ok && ::poll(&p, 1, 10000) > 0) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n <= 0) break;
    reply.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fd);
  const std::size_t end = reply.find("\r\n\r\n");
  if (reply.rfind("HTTP/1.1 ", 0) != 0 || end == std::string::npos)
    throw std::runtime_error("no HTTP answer from " + socket);
  ControlResponse r;
  r.status = std::stoi(reply.substr(9, 3));
  r.body = reply.substr(end + 4);
  return r;
}

}  // namespace nvj::cli
