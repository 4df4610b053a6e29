// SPDX-License-Identifier: BSD-3-Clause
// metrics=: GET /metrics over TCP through the real nbdkit, and nothing else
// on that listener; without control=, after nbdkit's fork, on IPv6; and bad
// addresses refused at start-up. (Prometheus itself scrapes it in
// prometheus_test.sh.)
#include <catch2/catch.hpp>

#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "common/control_client.h"
#include "common/json.h"
#include "server_fixture.h"
#include "tools/nvj/host/files/text_file.h"
#include "tools/nvj/host/processes/process.h"

namespace metrics_listener_test {

using nvj::Json;
using nvj::test::connect;
using nvj::test::control_json;
using nvj::test::free_tcp_port;
using nvj::test::tcp_request;
using nvj::test::TempDir;

namespace {

// A server with metrics=ADDRESS:PORT (a free port, another one if that one
// is taken before nbdkit binds it) and `params`; sets `port`.
std::unique_ptr<nvj::cli::ServerProcess> start_with_metrics(const std::filesystem::path& dir,
                                                            const std::string& address,
                                                            const std::vector<std::string>& params,
                                                            std::uint16_t& port) {
  const std::string shown = address.find(':') != std::string::npos ? "[" + address + "]" : address;
  for (int attempt = 0;; ++attempt) {
    port = free_tcp_port(address);
    REQUIRE(port != 0);
    std::vector<std::string> all = params;
    all.push_back("metrics=" + shown + ":" + std::to_string(port));
    try {
      return nvj::test::start_server(dir / std::to_string(attempt), all);
    } catch (const std::runtime_error& e) {
      if (attempt >= 3 || std::string(e.what()).find("Address already in use") == std::string::npos) throw;
    }
  }
}

}  // namespace

TEST_CASE("the metrics listener serves GET /metrics over TCP and acts on nothing else", "[control][metrics]") {
  TempDir dir;
  const std::string control = dir.file("control.sock");
  std::uint16_t port = 0;
  auto server = start_with_metrics(dir.path, "127.0.0.1", {"data=64M", "data-model=none", "journal-model=none",
                                                           "control=" + control, "crash-log=16M"}, port);
  auto data = connect(*server, "data");
  std::vector<char> block(4096, 'm');
  for (int i = 0; i < 10; ++i)
    REQUIRE(nbd_pwrite(data.get(), block.data(), block.size(), static_cast<std::uint64_t>(i) * 4096, 0) == 0);

  std::string r = tcp_request("127.0.0.1", port, "GET", "/metrics");
  CHECK_THAT(r, Catch::StartsWith("HTTP/1.1 200 OK\r\n"));
  CHECK_THAT(r, Catch::Contains("Content-Type: text/plain; version=0.0.4; charset=utf-8\r\n"));
  CHECK_THAT(nvj::test::http_body(r), Catch::Contains("nvjournal_requests_total{export=\"data\",op=\"write\"} 10\n"));
  CHECK_THAT(nvj::test::http_body(r),
             Catch::Contains("nvjournal_latency_seconds_bucket{export=\"data\",op=\"write\",le=\"+Inf\"} 10\n"));
  // The same text as on the control socket, but for the moment it was taken.
  CHECK_THAT(nvj::control_call(control, "GET", "/metrics"),
             Catch::Contains("# TYPE nvjournal_latency_seconds histogram"));

  // The control API's requests: none is served here, none acts.
  for (const auto& [method, target] : std::vector<std::pair<std::string, std::string>>{
           {"POST", "/crash"}, {"POST", "/crash?policy=all"}, {"POST", "/power-on"}, {"POST", "/reset-stats"},
           {"POST", "/mark?label=x"}, {"POST", "/model?export=data&model=hdd"}, {"GET", "/stats"},
           {"GET", "/journal"}, {"GET", "/"}}) {
    r = tcp_request("127.0.0.1", port, method, target);
    INFO(method << " " << target << ": " << r);
    CHECK_THAT(r, Catch::StartsWith("HTTP/1.1 404 Not Found\r\n"));
  }
  for (const char* method : {"POST", "PUT", "DELETE"})
    CHECK_THAT(tcp_request("127.0.0.1", port, method, "/metrics"), Catch::StartsWith("HTTP/1.1 405"));
  CHECK_THAT(nvj::test::tcp_exchange("127.0.0.1", port, "GARBAGE\r\n\r\n"), Catch::StartsWith("HTTP/1.1 400"));

  const Json stats = control_json(control, "GET", "/stats");
  for (const auto& [name, e] : stats.at("exports").items()) {
    CAPTURE(name);
    CHECK(e.at("powered") == true);
  }
  CHECK(stats.at("exports").at("data").at("ops").at("write").at("count") == 10);  // not reset
  CHECK(stats.at("exports").at("data").at("model") == "none");
  CHECK(stats.at("marks").empty());
  // The export still serves, and what it holds was not cut.
  REQUIRE(nbd_flush(data.get(), 0) == 0);
  std::vector<char> back(4096);
  REQUIRE(nbd_pread(data.get(), back.data(), back.size(), 9 * 4096, 0) == 0);
  CHECK(back == block);
  data.reset();
  CHECK(server->stop() == 0);
  // The port is free again.
  CHECK(tcp_request("127.0.0.1", port, "GET", "/metrics").empty());
}

TEST_CASE("metrics= works without control=", "[control][metrics]") {
  TempDir dir;
  std::uint16_t port = 0;
  // With the default: an ext4 filesystem and the journal tracer.
  auto server = start_with_metrics(dir.path / "v4", "127.0.0.1", {"data=64M"}, port);
  const std::string r = tcp_request("127.0.0.1", port, "GET", "/metrics");
  CHECK_THAT(r, Catch::StartsWith("HTTP/1.1 200 OK\r\n"));
  CHECK_THAT(nvj::test::http_body(r), Catch::Contains("# TYPE nvjournal_journal_commit_seconds histogram\n"));
  CHECK_FALSE(std::filesystem::exists(dir.path / "v4" / "0" / "control.sock"));
  CHECK(server->stop() == 0);
}

// Hidden from the default run: ctest runs it through a wrapper that reports
// it skipped where the host has no IPv6 loopback (tests/integration/CMakeLists.txt).
TEST_CASE("metrics= on IPv6 listens there and only there", "[.][ipv6][control][metrics]") {
  TempDir dir;
  std::uint16_t port = 0;
  REQUIRE(free_tcp_port("::1") != 0);
  auto server = start_with_metrics(dir.path / "v6", "::1", {"data=64M", "fs=none"}, port);
  CHECK_THAT(tcp_request("::1", port, "GET", "/metrics"), Catch::StartsWith("HTTP/1.1 200 OK\r\n"));
  CHECK(tcp_request("127.0.0.1", port, "GET", "/metrics").empty());  // only where it was asked to listen
  CHECK(server->stop() == 0);
}

TEST_CASE("the metrics listener outlives nbdkit's fork into the background", "[control][metrics]") {
  TempDir dir;
  const std::string pidfile = dir.file("nbdkit.pid");
  std::uint16_t port = 0;
  nvj::cli::RunResult r;
  for (int attempt = 0; attempt < 4; ++attempt) {  // another port if this one is taken before nbdkit binds it
    port = free_tcp_port();
    REQUIRE(port != 0);
    r = nvj::cli::run({"nbdkit", "-U", dir.file("nbd.sock"), "-P", pidfile, nvj::cli::ServerProcess::default_plugin(),
                       "data=64M", "fs=none", "data-model=none", "metrics=" + std::to_string(port)},
                      nvj::test::server_env(), std::chrono::seconds(30));
    if (r.output.find("Address already in use") == std::string::npos) break;
  }
  INFO(r.output);
  REQUIRE(r.status == 0);
  // The child writes the pidfile after the parent has exited: wait for a whole line.
  std::string pid_line;
  for (int i = 0; i < 200; ++i) {
    if (std::filesystem::exists(pidfile)) pid_line = nvj::cli::read_text_file(pidfile);
    if (!pid_line.empty() && pid_line.back() == '\n') break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  REQUIRE_THAT(pid_line, Catch::EndsWith("\n"));
  struct Stop {  // also when a check below throws
    pid_t pid;
    ~Stop() {
      ::kill(pid, SIGTERM);
      for (int i = 0; i < 100 && ::kill(pid, 0) == 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  } stop{std::stoi(pid_line)};
  const std::string answer = tcp_request("127.0.0.1", port, "GET", "/metrics");
  CHECK_THAT(answer, Catch::StartsWith("HTTP/1.1 200 OK\r\n"));
  CHECK_THAT(answer, Catch::Contains("nvjournal_requests_total{export=\"data\",op=\"write\"} 0\n"));
}

TEST_CASE("a metrics= address that cannot be listened on is refused at start-up", "[control][metrics][parameters]") {
  TempDir dir;
  auto start = [&](const std::string& value) {
    return nvj::cli::run({"nbdkit", "-U", dir.file("nbd.sock"), "--run", "true",
                          nvj::cli::ServerProcess::default_plugin(), "data=64M", "fs=none", "metrics=" + value},
                         nvj::test::server_env(), std::chrono::seconds(30));
  };
  // A port someone listens on.
  const int holder = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  REQUIRE(holder >= 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::bind(holder, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  REQUIRE(::listen(holder, 1) == 0);
  socklen_t length = sizeof addr;
  REQUIRE(::getsockname(holder, reinterpret_cast<sockaddr*>(&addr), &length) == 0);
  const std::string taken = std::to_string(ntohs(addr.sin_port));
  const std::vector<std::pair<std::string, std::string>> cases{
      {taken, "metrics=" + taken + ": cannot listen on 127.0.0.1:" + taken + ": Address already in use"},
      // TEST-NET-1 (RFC 5737): no machine has it.
      {"192.0.2.1:9630", "metrics=192.0.2.1:9630: cannot listen on 192.0.2.1:9630: Cannot assign requested address"},
      {"127.0.0.1", "metrics=127.0.0.1: '127.0.0.1' is not a port: expected [ADDRESS:]PORT"},
      {"0", "metrics=0: port 0 is out of range: a port is 1 to 65535"},
  };
  for (const auto& [value, message] : cases) {
    const auto r = start(value);
    INFO("metrics=" << value << ": " << r.output);
    CHECK(r.status != 0);
    std::size_t errors = 0;
    for (std::size_t at = r.output.find("error:"); at != std::string::npos; at = r.output.find("error:", at + 1))
      ++errors;
    CHECK(errors == 1);
    CHECK_THAT(r.output, Catch::Contains("error: " + message));
  }
  ::close(holder);
}

}  // namespace metrics_listener_test
