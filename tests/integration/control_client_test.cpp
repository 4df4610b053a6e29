// SPDX-License-Identifier: BSD-3-Clause
// The control client (nvj stats, nvj journal top, the testbed) against real
// Unix sockets: a small server in the test that answers well, badly, late
// or not at all, sockets nobody listens on, and a real nbdkit's control
// socket.
#include <catch2/catch.hpp>

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <stdexcept>
#include <string>
#include <thread>

#include "server_fixture.h"
#include "common/control_client.h"

namespace control_client_test {

using nvj::control_call;
using nvj::control_request;
using nvj::test::TempDir;

namespace {

sockaddr_un address(const std::string& path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  path.copy(addr.sun_path, sizeof addr.sun_path - 1);
  return addr;
}

void send_all(int fd, const std::string& bytes) {
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::send(fd, bytes.data() + done, bytes.size() - done, MSG_NOSIGNAL);
    if (n <= 0) return;  // the client left
    done += static_cast<std::size_t>(n);
  }
}

// Holds the connection until the client closes it.
void wait_for_close(int fd) {
  char b[256];
  while (::read(fd, b, sizeof b) > 0) {
  }
}

// A server for one connection on a Unix socket: it reads the request's head,
// then `answer` does what the test wants with the connection.
class TinyServer {
 public:
  TinyServer(std::string path, std::function<void(int)> answer) : path_(std::move(path)) {
    fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    const sockaddr_un addr = address(path_);
    if (fd_ < 0 || ::bind(fd_, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0 || ::listen(fd_, 4) != 0)
      throw std::runtime_error("cannot listen on " + path_);
    thread_ = std::thread([this, answer = std::move(answer)] {
      pollfd p{fd_, POLLIN, 0};
      while (!stop_ && ::poll(&p, 1, 50) == 0) {
      }
      if (stop_) return;
      const int c = ::accept(fd_, nullptr, nullptr);
      if (c < 0) return;
      char b = 0;
      while (request_.find("\r\n\r\n") == std::string::npos && ::read(c, &b, 1) == 1) request_ += b;
      answer(c);
      ::close(c);
    });
  }
  ~TinyServer() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
    ::close(fd_);
    ::unlink(path_.c_str());
  }
  TinyServer(const TinyServer&) = delete;
  TinyServer& operator=(const TinyServer&) = delete;

  // What the client sent, once the exchange is over.
  std::string request() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
    return request_;
  }

 private:
  std::string path_;
  int fd_ = -1;
  std::atomic<bool> stop_{false};
  std::string request_;
  std::thread thread_;
};

std::function<void(int)> answers(std::string bytes, bool hold_open = false) {
  return [bytes = std::move(bytes), hold_open](int fd) {
    send_all(fd, bytes);
    if (hold_open) wait_for_close(fd);
  };
}

std::string error_of(const std::function<void()>& call) {
  try {
    call();
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  FAIL("no error");
  return "";
}

}  // namespace

TEST_CASE("the control client sends one HTTP/1.1 request and reads the answer by its length", "[control][client]") {
  TempDir dir;
  const std::string socket = dir.file("c.sock");
  {
    // Content-Length ends the answer: the server keeps the connection open
    // and sends more bytes than it announced.
    TinyServer server(socket, answers("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhelloEXTRA", true));
    const auto r = control_request(socket, "GET", "/stats?format=text", std::chrono::seconds(20));
    CHECK(r.status == 200);
    CHECK(r.body == "hello");
    const std::string request = server.request();
    CHECK_THAT(request, Catch::StartsWith("GET /stats?format=text HTTP/1.1\r\n"));
    CHECK_THAT(request, Catch::Contains("Host: nvjournal\r\n"));
  }
  {
    TinyServer server(socket, answers("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                                      "5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n",
                                      true));
    const auto r = control_request(socket, "POST", "/mark?label=x", std::chrono::seconds(20));
    CHECK(r.status == 200);
    CHECK(r.body == "hello world");
    const std::string request = server.request();
    CHECK_THAT(request, Catch::StartsWith("POST /mark?label=x HTTP/1.1\r\n"));
    CHECK_THAT(request, Catch::Contains("Content-Length: 0\r\n"));
  }
  {
    // Neither: the body runs to the close.
    TinyServer server(socket, answers("HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nto the end"));
    CHECK(control_request(socket, "GET", "/stats").body == "to the end");
  }
  {
    TinyServer server(socket, answers("HTTP/1.1 404 Not Found\r\nContent-Length: 17\r\n\r\n{\"error\":\"nope\"}\n"));
    const auto r = control_request(socket, "GET", "/nowhere");
    CHECK(r.status == 404);
    CHECK(r.body == "{\"error\":\"nope\"}\n");
  }
  {
    TinyServer server(socket, answers("HTTP/1.1 404 Not Found\r\nContent-Length: 17\r\n\r\n{\"error\":\"nope\"}\n"));
    CHECK(error_of([&] { control_call(socket, "GET", "/nowhere"); }) ==
          "control socket " + socket + ": GET /nowhere answered 404: {\"error\":\"nope\"}");
  }
}

TEST_CASE("the control client names the socket and what went wrong", "[control][client]") {
  TempDir dir;
  const std::string socket = dir.file("c.sock");
  const std::string prefix = "control socket " + socket + ": ";

  CHECK(error_of([&] { control_request(socket, "GET", "/stats"); }) ==
        prefix + "no such file or directory (is a server running with control=" + socket + "?)");
  {
    // A socket file nobody listens on.
    const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    const sockaddr_un addr = address(socket);
    REQUIRE(::bind(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0);
    ::close(fd);
    CHECK_THAT(error_of([&] { control_request(socket, "GET", "/stats"); }),
               Catch::StartsWith(prefix + "connection refused"));
    ::unlink(socket.c_str());
  }
  const std::string long_path = "/" + std::string(200, 'x');
  CHECK_THAT(error_of([&] { control_request(long_path, "GET", "/stats"); }),
             Catch::EndsWith(": the path is longer than a Unix socket allows (107 bytes)"));
  {
    TinyServer server(socket, answers("GARBAGE\r\n\r\n"));
    CHECK_THAT(error_of([&] { control_request(socket, "GET", "/stats"); }),
               Catch::StartsWith(prefix + "not HTTP: ") && Catch::Contains("(the answer began \"GARBAGE\\r\\n"));
  }
  {
    TinyServer server(socket, answers("HTTP/1.1 2x0 OK\r\nContent-Length: 0\r\n\r\n"));
    CHECK_THAT(error_of([&] { control_request(socket, "GET", "/stats"); }), Catch::StartsWith(prefix + "not HTTP: "));
  }
  {
    TinyServer server(socket, [](int) {});  // closes at once
    CHECK(error_of([&] { control_request(socket, "GET", "/stats"); }) ==
          prefix + "closed the connection without answering GET /stats");
  }
  {
    TinyServer server(socket, answers("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nshort"));
    CHECK(error_of([&] { control_request(socket, "GET", "/journal"); }) ==
          prefix + "the answer to GET /journal was cut short (the connection closed before its end)");
  }
  {
    TinyServer server(socket, answers("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nhalf", true));  // and nothing more
    CHECK(error_of([&] { control_request(socket, "GET", "/stats", std::chrono::milliseconds(300)); }) ==
          prefix + "no answer to GET /stats within 300 ms");
  }
  {
    TinyServer server(socket, wait_for_close);  // says nothing
    CHECK(error_of([&] { control_request(socket, "GET", "/stats", std::chrono::milliseconds(300)); }) ==
          prefix + "no answer to GET /stats within 300 ms");
  }
}

TEST_CASE("the control client against a real server's control socket", "[control][client]") {
  TempDir dir;
  const std::string control = dir.file("control.sock");
  auto server = nvj::test::start_server(dir.path / "run", {"control=" + control, "data-model=none"});
  const auto r = control_request(control, "GET", "/stats?format=text");
  CHECK(r.status == 200);
  CHECK_THAT(r.body, Catch::StartsWith("export       op"));
  const std::string prefix = "control socket " + control + ": ";
  CHECK_THAT(error_of([&] { control_call(control, "GET", "/nowhere"); }),
             Catch::StartsWith(prefix + "GET /nowhere answered 404: {\"error\":\"no such path: /nowhere"));
  CHECK_THAT(error_of([&] { control_call(control, "POST", "/crash?policy=sideways"); }),
             Catch::StartsWith(prefix + "POST /crash?policy=sideways answered 400: {\"error\":"));
  CHECK(server->stop() == 0);
  CHECK_THAT(error_of([&] { control_request(control, "GET", "/stats"); }),
             Catch::StartsWith(prefix + "no such file or directory"));
}

}  // namespace control_client_test
