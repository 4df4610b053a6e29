// SPDX-License-Identifier: BSD-3-Clause
#include "common/control_client.h"

#include <sys/un.h>

#include <cctype>
#include <cerrno>
#include <stdexcept>

#include "common/asio_beast.h"
#include "common/duration.h"

namespace nvj {
namespace asio = boost::asio;
namespace http = boost::beast::http;
using Local = asio::local::stream_protocol;

namespace {

constexpr std::uint64_t kBodyLimit = std::uint64_t{64} << 20;

// "Connection refused" -> "connection refused", to follow a colon.
std::string lowercase_first(std::string text) {
  if (!text.empty()) text[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(text[0])));
  return text;
}

// The errno behind a failed socket operation, 0 for Beast's own errors.
int errno_of(const boost::system::error_code& ec) {
  return ec.category() == boost::system::system_category() ? ec.value() : 0;
}

// The first bytes of what arrived, printable, for an error message.
std::string excerpt(const boost::beast::flat_buffer& buffer) {
  const auto data = buffer.data();
  const auto* bytes = static_cast<const unsigned char*>(data.data());
  std::string out;
  for (std::size_t i = 0; i < data.size() && i < 40; ++i) {
    const unsigned char c = bytes[i];
    if (c == '\r') out += "\\r";
    else if (c == '\n') out += "\\n";
    else if (std::isprint(c)) out += static_cast<char>(c);
    else out += '?';
  }
  return data.size() > 40 ? out + "..." : out;
}

// One request on one connection; every step bounded by one deadline.
class Exchange {
 public:
  Exchange(const std::string& path, std::string request_line, std::chrono::milliseconds timeout)
      : path_(path), request_line_(std::move(request_line)), timeout_(timeout),
        deadline_(std::chrono::steady_clock::now() + timeout) {}

  [[noreturn]] void fail(const std::string& what, int error = 0) const {
    throw ControlError("control socket " + path_ + ": " + what, error);
  }

  // Starts an operation with `start(handler)` and runs it to its end; past
  // the deadline the socket is closed and the exchange fails.
  template <class Start>
  boost::system::error_code await(Start start) {
    boost::system::error_code result;
    bool done = false;
    start([&](boost::system::error_code ec, auto&&...) {
      result = ec;
      done = true;
    });
    io_.restart();
    io_.run_until(deadline_);
    if (!done) {
      boost::system::error_code ignored;
      socket_.close(ignored);
      io_.restart();
      io_.run();  // the cancelled operation's handler
      fail("no answer to " + request_line_ + " within " +
               format_duration(std::chrono::duration_cast<std::chrono::nanoseconds>(timeout_).count()),
           ETIMEDOUT);
    }
    return result;
  }

  Local::socket& socket() { return socket_; }

 private:
  std::string path_;
  std::string request_line_;
  std::chrono::milliseconds timeout_;
  std::chrono::steady_clock::time_point deadline_;
  asio::io_context io_;
  Local::socket socket_{io_};
};

}  // namespace

ControlResponse control_request(const std::string& socket, const std::string& method, const std::string& target,
                                std::chrono::milliseconds timeout) {
  const std::string request_line = method + " " + target;
  Exchange x(socket, request_line, timeout);
  if (socket.empty()) x.fail("no path given");
  if (socket.size() >= sizeof(sockaddr_un::sun_path))
    x.fail("the path is longer than a Unix socket allows (" + std::to_string(sizeof(sockaddr_un::sun_path) - 1) +
           " bytes)");

  boost::system::error_code ec = x.await([&](auto handler) {
    x.socket().async_connect(Local::endpoint(socket), std::move(handler));
  });
  if (ec) x.fail(lowercase_first(ec.message()) + " (is a server running with control=" + socket + "?)", errno_of(ec));

  http::request<http::empty_body> request;
  request.method_string(method);
  request.target(target);
  request.version(11);
  request.set(http::field::host, "nvjournal");
  request.set(http::field::connection, "close");
  request.prepare_payload();
  ec = x.await([&](auto handler) { http::async_write(x.socket(), request, std::move(handler)); });
  if (ec) x.fail("cannot send " + request_line + ": " + lowercase_first(ec.message()), errno_of(ec));

  boost::beast::flat_buffer buffer;
  http::response_parser<http::string_body> parser;
  parser.body_limit(kBodyLimit);
  ec = x.await([&](auto handler) { http::async_read(x.socket(), buffer, parser, std::move(handler)); });
  if (ec == http::error::end_of_stream) x.fail("closed the connection without answering " + request_line);
  if (ec == http::error::partial_message)
    x.fail("the answer to " + request_line + " was cut short (the connection closed before its end)");
  if (ec == http::error::body_limit)
    x.fail("the answer to " + request_line + " is larger than " + std::to_string(kBodyLimit >> 20) + " MiB");
  if (ec && ec.category() == http::make_error_code(http::error::bad_version).category()) {  // the parser's
    const std::string seen = excerpt(buffer);
    x.fail("not HTTP: " + ec.message() + (seen.empty() ? "" : " (the answer began \"" + seen + "\")"));
  }
  if (ec) x.fail("reading the answer to " + request_line + ": " + lowercase_first(ec.message()), errno_of(ec));
  ControlResponse r;
  r.status = static_cast<int>(parser.get().result_int());
  r.body = std::move(parser.get().body());
  return r;
}

std::string control_call(const std::string& socket, const std::string& method, const std::string& target,
                         std::chrono::milliseconds timeout) {
  ControlResponse r = control_request(socket, method, target, timeout);
  if (r.status != 200) {
    std::string body = r.body;
    while (!body.empty() && (body.back() == '\n' || body.back() == '\r')) body.pop_back();
    throw ControlError("control socket " + socket + ": " + method + " " + target + " answered " +
                           std::to_string(r.status) + ": " + body,
                       0);
  }
  return std::move(r.body);
}

}  // namespace nvj
