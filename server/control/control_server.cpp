#include "server/control/control_server.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

// <utility> first: Boost 1.74's Asio uses std::exchange without including it.
#include <utility>

// GCC 12 at -O2 and above reports a "potential null pointer dereference"
// inside Boost.Asio itself: scheduler::compensating_work_started
// (boost/asio/detail/impl/scheduler.ipp) inlined into the epoll reactor
// (epoll_reactor.ipp). Off for these headers only; on for the code below.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wnull-dereference"
#include <boost/asio/io_context.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#pragma GCC diagnostic pop
#include <cerrno>
#include <chrono>
#include <stdexcept>
#include <thread>

#include "common/json.h"
#include "server/control/control_routes.h"
#include "server/store/io_error.h"

namespace nvj {
namespace asio = boost::asio;
namespace http = boost::beast::http;
using Local = asio::local::stream_protocol;

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
  Session(Local::socket socket, Lab& lab) : socket_(std::move(socket)), timer_(socket_.get_executor()), lab_(lab) {
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
      reply = route_control(lab_, std::string_view(req.method_string().data(), req.method_string().size()),
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
      self->socket_.shutdown(Local::socket::shutdown_both, ignored);
      self->socket_.close(ignored);
      self->timer_.cancel();
    });
  }

  Local::socket socket_;
  asio::steady_timer timer_;
  Lab& lab_;
  boost::beast::flat_buffer buffer_;
  http::request_parser<http::string_body> parser_;
  http::response<http::string_body> response_;
};

}  // namespace

struct ControlServer::Impl {
  asio::io_context io;
  Local::acceptor acceptor{io};
  std::thread thread;

  void accept(Lab& lab) {
    acceptor.async_accept([this, &lab](boost::system::error_code ec, Local::socket socket) {
      if (ec == asio::error::operation_aborted) return;
      if (!ec) std::make_shared<Session>(std::move(socket), lab)->run();
      accept(lab);
    });
  }
};

ControlServer::ControlServer(Lab& lab, std::string path) : lab_(lab), path_(std::move(path)) {
  const sockaddr_un addr = address_of(path_);
  struct stat st {};
  if (::lstat(path_.c_str(), &st) == 0) {
    if (!S_ISSOCK(st.st_mode)) throw std::runtime_error("exists and is not a socket");
    if (live(addr)) throw std::runtime_error("another server is listening on it");
    ::unlink(path_.c_str());  // left by a server that is gone
  }
  listen_fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (listen_fd_ < 0) throw std::runtime_error("socket: " + errno_text(errno));
  // Owner only, from the moment it exists.
  const mode_t old = ::umask(0177);
  const int bound = ::bind(listen_fd_, reinterpret_cast<const sockaddr*>(&addr), sizeof addr);
  const int bind_errno = errno;
  ::umask(old);
  if (bound != 0 || ::listen(listen_fd_, 16) != 0) {
    const int err = bound != 0 ? bind_errno : errno;
    ::close(listen_fd_);
    listen_fd_ = -1;
    throw std::runtime_error("cannot listen: " + errno_text(err));
  }
}

ControlServer::~ControlServer() { stop(); }

void ControlServer::start() {
  if (impl_ || listen_fd_ < 0) return;
  impl_ = std::make_unique<Impl>();
  impl_->acceptor.assign(Local(), listen_fd_);
  listen_fd_ = -1;  // the acceptor owns it now
  impl_->accept(lab_);
  impl_->thread = std::thread([io = &impl_->io] { io->run(); });
  served_ = true;
}

void ControlServer::stop() {
  if (impl_) {
    impl_->io.stop();
    if (impl_->thread.joinable()) impl_->thread.join();
    impl_.reset();
  }
  if (listen_fd_ >= 0) {
    ::close(listen_fd_);
    listen_fd_ = -1;
  }
  if (served_ && !path_.empty()) ::unlink(path_.c_str());
  path_.clear();
}

}  // namespace nvj
