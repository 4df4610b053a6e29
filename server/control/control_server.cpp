// SPDX-License-Identifier: BSD-3-Clause
#include "server/control/control_server.h"

#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <stdexcept>
#include <thread>

#include "common/asio_beast.h"
#include "common/json.h"
#include "server/control/control_routes.h"
#include "server/store/io_error.h"

namespace nvj {
namespace asio = boost::asio;
namespace http = boost::beast::http;
// One socket type for both listeners: Unix and TCP sockets differ only in
// how they are bound, which is done here with the system's calls.
using Stream = asio::generic::stream_protocol;
using Acceptor = asio::basic_socket_acceptor<Stream>;
using Router = ControlReply (*)(Lab&, std::string_view, std::string_view);

namespace {

constexpr auto kRequestTimeout = std::chrono::seconds(10);

sockaddr_un address_of(const std::string& path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof addr.sun_path)
    throw std::runtime_error("the path is longer than a Unix socket allows (" +
                             std::to_string(sizeof addr.sun_path - 1) + " bytes)");
  path.copy(addr.sun_path, path.size());
  return addr;
}

// Someone is listening on `path`.
bool live(const sockaddr_un& addr) {
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  const bool connected = ::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0;
  ::close(fd);
  return connected;
}

// One connection: read one request (bounded in size and time), answer, close.
class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(Stream::socket socket, Lab& lab, Router route)
      : socket_(std::move(socket)), timer_(socket_.get_executor()), lab_(lab), route_(route) {
    parser_.header_limit(8 * 1024);
    parser_.body_limit(64 * 1024);
  }

  void run() {
    timer_.expires_after(kRequestTimeout);
    timer_.async_wait([self = shared_from_this()](boost::system::error_code ec) {
      if (!ec) self->socket_.close();
    });
    http::async_read(socket_, buffer_, parser_, [self = shared_from_this()](boost::system::error_code ec, std::size_t) {
      self->on_read(ec);
    });
  }

 private:
  void on_read(boost::system::error_code ec) {
    ControlReply reply;
    if (ec == http::error::end_of_stream || ec == asio::error::operation_aborted || ec == asio::error::eof ||
        ec == asio::error::bad_descriptor || ec == asio::error::connection_reset) {
      timer_.cancel();
      return;  // the peer left, or took too long
    }
    if (ec) {
      reply = {400, "application/json", to_json_text(Json{{"error", "malformed request: " + ec.message()}}) + "\n"};
    } else {
      const auto& req = parser_.get();
      reply = route_(lab_, std::string_view(req.method_string().data(), req.method_string().size()),
                            std::string_view(req.target().data(), req.target().size()));
    }
    response_.result(reply.status);
    response_.version(11);
    response_.set(http::field::server, "nvjournal");
    response_.set(http::field::content_type, reply.content_type);
    response_.set(http::field::connection, "close");
    response_.body() = std::move(reply.body);
    response_.prepare_payload();
    http::async_write(socket_, response_, [self = shared_from_this()](boost::system::error_code, std::size_t) {
      boost::system::error_code ignored;
      self->socket_.shutdown(Stream::socket::shutdown_both, ignored);
      self->socket_.close(ignored);
      self->timer_.cancel();
    });
  }

  Stream::socket socket_;
  asio::steady_timer timer_;
  Lab& lab_;
  Router route_;
  boost::beast::flat_buffer buffer_;
  http::request_parser<http::string_body> parser_;
  http::response<http::string_body> response_;
};

// "127.0.0.1:9630", "[::1]:9630": an address as bound, for messages.
std::string shown(const sockaddr* addr, socklen_t length) {
  char host[NI_MAXHOST];
  char port[NI_MAXSERV];
  if (::getnameinfo(addr, length, host, sizeof host, port, sizeof port, NI_NUMERICHOST | NI_NUMERICSERV) != 0)
    return "?";
  return addr->sa_family == AF_INET6 ? "[" + std::string(host) + "]:" + port : std::string(host) + ":" + port;
}

}  // namespace

struct ControlServer::Impl {
  asio::io_context io;
  std::vector<std::unique_ptr<Acceptor>> acceptors;
  std::thread thread;

  void accept(Acceptor& acceptor, Lab& lab, Router route) {
    acceptor.async_accept([this, &acceptor, &lab, route](boost::system::error_code ec, Stream::socket socket) {
      if (ec == asio::error::operation_aborted) return;
      if (!ec) std::make_shared<Session>(std::move(socket), lab, route)->run();
      accept(acceptor, lab, route);
    });
  }
};

ControlServer::ControlServer(Lab& lab) : lab_(lab) {}

void ControlServer::listen_control(std::string path) {
  const sockaddr_un addr = address_of(path);
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0) {
    if (!S_ISSOCK(st.st_mode)) throw std::runtime_error("exists and is not a socket");
    if (live(addr)) throw std::runtime_error("another server is listening on it");
    ::unlink(path.c_str());  // left by a server that is gone
  }
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw std::runtime_error("socket: " + errno_text(errno));
  // Owner only, from the moment it exists.
  const mode_t old = ::umask(0177);
  const int bound = ::bind(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr);
  const int bind_errno = errno;
  ::umask(old);
  if (bound != 0 || ::listen(fd, 16) != 0) {
    const int err = bound != 0 ? bind_errno : errno;
    ::close(fd);
    throw std::runtime_error("cannot listen: " + errno_text(err));
  }
  listeners_.push_back({fd, AF_UNIX, false});
  path_ = std::move(path);
}

void ControlServer::listen_metrics(const ListenAddress& address) {
  const std::string host = address.host.empty() ? "127.0.0.1" : address.host;
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV;
  addrinfo* found = nullptr;
  const int rc = ::getaddrinfo(host.c_str(), std::to_string(address.port).c_str(), &hints, &found);
  if (rc != 0)
    throw std::runtime_error("cannot resolve '" + host +
                             "': " + (rc == EAI_SYSTEM ? errno_text(errno) : std::string(::gai_strerror(rc))));
  const std::unique_ptr<addrinfo, decltype(&::freeaddrinfo)> addresses(found, &::freeaddrinfo);
  std::string why = "'" + host + "' has no address";
  for (const addrinfo* a = found; a != nullptr; a = a->ai_next) {
    const int fd = ::socket(a->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
      why = "socket: " + errno_text(errno);
      continue;
    }
    // A restarted server binds again at once, past the old connections'
    // TIME_WAIT; a port someone listens on is still refused.
    const int one = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (::bind(fd, a->ai_addr, a->ai_addrlen) == 0 && ::listen(fd, 16) == 0) {
      listeners_.push_back({fd, a->ai_family, true});
      return;
    }
    const int err = errno;
    why = "cannot listen on " + shown(a->ai_addr, a->ai_addrlen) + ": " + errno_text(err);
    ::close(fd);
  }
  throw std::runtime_error(why);
}

ControlServer::~ControlServer() { stop(); }

void ControlServer::start() {
  if (impl_ || listeners_.empty()) return;
  impl_ = std::make_unique<Impl>();
  for (Listener& l : listeners_) {
    auto& acceptor = *impl_->acceptors.emplace_back(std::make_unique<Acceptor>(impl_->io));
    acceptor.assign(Stream(l.family, l.family == AF_UNIX ? 0 : IPPROTO_TCP), l.fd);
    l.fd = -1;  // the acceptor owns it now
    impl_->accept(acceptor, lab_, l.metrics_only ? &route_metrics : &route_control);
  }
  listeners_.clear();
  impl_->thread = std::thread([io = &impl_->io] { io->run(); });
  served_ = true;
}

void ControlServer::stop() {
  if (impl_) {
    impl_->io.stop();
    if (impl_->thread.joinable()) impl_->thread.join();
    impl_.reset();
  }
  for (const Listener& l : listeners_)
    if (l.fd >= 0) ::close(l.fd);
  listeners_.clear();
  if (served_ && !path_.empty()) ::unlink(path_.c_str());
  path_.clear();
}

}  // namespace nvj
