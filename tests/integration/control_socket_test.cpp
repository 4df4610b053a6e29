// SPDX-License-Identifier: BSD-3-Clause
// The control API through the real nbdkit: HTTP over the Unix socket, the
// socket's mode, statistics after real NBD traffic, run-time model changes,
// and clients that send garbage, too much, or nothing at all.
#include <catch2/catch.hpp>

#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "common/control_client.h"
#include "common/json.h"
#include "server_fixture.h"
#include "tests/support/json_schema.h"
#include "tools/nvj/host/files/text_file.h"
#include "tools/nvj/host/processes/process.h"

namespace control_socket_test {

using nvj::Json;
using nvj::parse_json;
using nvj::test::check_valid;
using nvj::test::connect;
using nvj::test::control_json;
using nvj::test::start_server;
using nvj::test::TempDir;

namespace {

int dial(const std::string& path) {
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  path.copy(addr.sun_path, sizeof addr.sun_path - 1);
  REQUIRE(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  return fd;
}

// Sends `raw` and reads until the server closes (at most 15 s).
std::string http_exchange(const std::string& path, const std::string& raw) {
  return nvj::test::exchange_on(dial(path), raw);
}

std::string get(const std::string& path, const std::string& target, const char* method = "GET") {
  return http_exchange(path, nvj::test::http_request(method, target));
}

}  // namespace

TEST_CASE("the control socket serves statistics, marks, resets and model changes", "[control]") {
  TempDir dir;
  const std::string control = dir.file("control.sock");
  auto server = start_server(dir.path / "run", {"data=64M", "journal=8M", "control=" + control,
                                                "journal-model=nvram:latency=5us"});
  struct stat st {};
  REQUIRE(::stat(control.c_str(), &st) == 0);
  CHECK(S_ISSOCK(st.st_mode));
  CHECK((st.st_mode & 0777) == 0600);

  {
    auto journal = connect(*server, "journal");
    std::vector<char> block(4096, 'j');
    for (int i = 0; i < 10; ++i)
      REQUIRE(nbd_pwrite(journal.get(), block.data(), block.size(), static_cast<std::uint64_t>(i) * 4096, 0) == 0);
  }
  std::string r = get(control, "/stats");
  CHECK_THAT(r, Catch::StartsWith("HTTP/1.1 200 OK\r\n"));
  CHECK_THAT(r, Catch::Contains("Content-Type: application/json\r\n"));
  check_valid("stats", nvj::test::http_body(r));
  Json stats = parse_json(nvj::test::http_body(r), "GET /stats");
  const Json& journal = stats.at("exports").at("journal");
  CHECK(journal.at("description").get<std::string>().rfind("journal: 8 MiB", 0) == 0);
  CHECK(journal.at("ops").at("write").at("count") == 10);
  CHECK(journal.at("ops").at("write").at("bytes") == 40960);
  CHECK(journal.at("ops").at("write").at("errors") == 0);
  CHECK(journal.at("ops").at("write").at("latency_us").at("p50").get<double>() > 0);
  CHECK(journal.at("sequential_fraction") == 0.9);  // each write after the first began where the last ended
  CHECK(journal.at("in_flight") == 0);
  CHECK(journal.at("late_us").at("count") == 10);  // every write timed by the NVRAM model
  CHECK(stats.at("exports").at("data").at("ops").at("write").at("count") == 0);

  r = get(control, "/metrics");
  CHECK_THAT(r, Catch::Contains("nvjournal_requests_total{export=\"journal\",op=\"write\"} 10\n"));

  CHECK(control_json(control, "POST", "/mark?label=start") == Json{{"marked", "start"}});
  stats = control_json(control, "GET", "/stats");
  REQUIRE(stats.at("marks").size() == 1);
  CHECK(stats.at("marks")[0].at("label") == "start");

  const Json changed = control_json(control, "POST", "/model?export=journal&model=nvram%3Alatency%3D50us");
  CHECK(changed.at("export") == "journal");
  CHECK(changed.at("model").get<std::string>().rfind("nvram: write 50 us", 0) == 0);
  const auto refused = nvj::control_request(control, "POST", "/model?export=journal&model=hdd");
  CHECK(refused.status == 400);
  CHECK_THAT(parse_json(refused.body, "the refusal").at("error").get<std::string>(),
             Catch::Contains("durable on acknowledgement for as long as the server runs"));
  stats = control_json(control, "GET", "/stats");
  CHECK(stats.at("exports").at("journal").at("model") == changed.at("model"));

  CHECK(control_json(control, "POST", "/reset-stats") == Json{{"reset", true}});
  const std::string after_reset = nvj::control_call(control, "GET", "/stats");
  check_valid("stats", after_reset);
  CHECK(parse_json(after_reset, "GET /stats").at("exports").at("journal").at("ops").at("write").at("count") == 0);
  CHECK(nvj::control_request(control, "GET", "/nowhere").status == 404);
  CHECK(nvj::control_request(control, "DELETE", "/stats").status == 405);
  // The journal export is traced; the writes above were no journal's: nothing committed.
  const std::string journal_answer = nvj::control_call(control, "GET", "/journal");
  check_valid("journal", journal_answer);
  const Json traced = parse_json(journal_answer, "GET /journal");
  CHECK(traced.at("placement") == "external");
  CHECK(traced.at("committed_transactions") == 0);

  CHECK(server->stop() == 0);
  CHECK_FALSE(std::filesystem::exists(control));  // removed at exit
  CHECK_THAT(server->log(), Catch::Contains("nvjournal: statistics at exit"));
}

TEST_CASE("garbage, oversized and silent clients neither crash nor block the control socket", "[control]") {
  TempDir dir;
  const std::string control = dir.file("control.sock");
  auto server = start_server(dir.path / "run", {"control=" + control, "data-model=none"});

  // A client that connects and says nothing, held open throughout.
  const int silent = dial(control);

  const std::string garbage = http_exchange(control, "GARBAGE\r\n\r\n");
  CHECK_THAT(garbage, Catch::StartsWith("HTTP/1.1 400"));
  CHECK_THAT(parse_json(nvj::test::http_body(garbage), "the answer to garbage").at("error").get<std::string>(),
             Catch::StartsWith("malformed request: "));
  CHECK_THAT(http_exchange(control, std::string(5000, '\0')), Catch::StartsWith("HTTP/1.1 400"));
  CHECK_THAT(http_exchange(control, "GET /stats HTTP/1.1\r\nX: " + std::string(20000, 'a') + "\r\n\r\n"),
             Catch::StartsWith("HTTP/1.1 400"));
  CHECK_THAT(http_exchange(control, "POST /mark?label=x HTTP/1.1\r\nContent-Length: 1000000\r\n\r\n" +
                                   std::string(100000, 'b')),
             Catch::StartsWith("HTTP/1.1 400"));
  // Half a request, then the client goes away.
  ::close(dial(control));
  {
    const int half = dial(control);
    const std::string part = "GET /sta";
    CHECK(::send(half, part.data(), part.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(part.size()));
    ::close(half);
  }
  // Still serving, with the silent client connected.
  CHECK_THAT(get(control, "/stats"), Catch::StartsWith("HTTP/1.1 200"));
  ::close(silent);
  CHECK(server->stop() == 0);
}

TEST_CASE("bad control= parameters are refused at start-up", "[control][parameters]") {
  TempDir dir;
  const std::string regular = dir.file("regular");
  nvj::test::write_text(regular, "keep me");
  auto run = [&](const std::string& path) {
    return nvj::cli::run({"nbdkit", "-U", dir.file("nbd.sock"), "--run", "true",
                          nvj::cli::ServerProcess::default_plugin(), "control=" + path},
                         nvj::test::server_env(), std::chrono::seconds(30));
  };
  auto r = run(dir.file("no/such/dir/control.sock"));
  CHECK(r.status != 0);
  CHECK_THAT(r.output, Catch::Contains("control=" + dir.file("no/such/dir/control.sock") +
                                       ": cannot listen: No such file or directory"));
  r = run(regular);
  CHECK(r.status != 0);
  CHECK_THAT(r.output, Catch::Contains("control=" + regular + ": exists and is not a socket"));
  CHECK(nvj::cli::read_text_file(regular) == "keep me");
  r = run("/" + std::string(200, 'x'));
  CHECK(r.status != 0);
  CHECK_THAT(r.output, Catch::Contains("is longer than a Unix socket allows"));

  // A socket another server is listening on.
  const std::string taken = dir.file("taken.sock");
  auto first = start_server(dir.path / "first", {"control=" + taken, "data-model=none"});
  r = run(taken);
  CHECK(r.status != 0);
  CHECK_THAT(r.output, Catch::Contains("control=" + taken + ": another server is listening on it"));
  CHECK(first->stop() == 0);
}

TEST_CASE("the control socket outlives nbdkit's fork into the background", "[control]") {
  // nbdkit's default: bind, fork, the parent exits. Its exit must not take
  // the child's socket file with it.
  TempDir dir;
  const std::string control = dir.file("control.sock");
  nvj::test::ForkedServer server(dir, {"data=64M", "data-model=none", "journal-model=none", "control=" + control});
  INFO(server.parent.output);
  REQUIRE(server.parent.status == 0);
  REQUIRE_THAT(server.pid_line, Catch::EndsWith("\n"));
  const auto stats = nvj::control_request(control, "GET", "/stats");
  CHECK(stats.status == 200);
  check_valid("stats", stats.body);
  CHECK(parse_json(stats.body, "GET /stats").at("exports").contains("data"));
  CHECK(server.stop(std::chrono::seconds(5)));
  CHECK_FALSE(std::filesystem::exists(control));  // the server that served it removed it
}

TEST_CASE("nvj stats shows a running server's statistics", "[control][nvj]") {
  TempDir dir;
  const std::string control = dir.file("control.sock");
  auto server = start_server(dir.path / "run", {"control=" + control, "data-model=none", "journal-model=none"});
  {
    auto data = connect(*server, "data");
    std::vector<char> block(8192, 'd');
    REQUIRE(nbd_pwrite(data.get(), block.data(), block.size(), 0, 0) == 0);
    REQUIRE(nbd_flush(data.get(), 0) == 0);
  }
  auto r = nvj::cli::run({NVJ_BINARY, "stats", control});
  CHECK(r.status == 0);
  CHECK_THAT(r.output, Catch::StartsWith("export       op"));
  CHECK_THAT(r.output, Catch::Contains("data         write           1         8192"));
  CHECK_THAT(r.output, Catch::Contains("data         flush           1"));
  r = nvj::cli::run({NVJ_BINARY, "stats", "--json", control});
  CHECK(r.status == 0);
  check_valid("stats", r.output);
  const Json data = parse_json(r.output, "nvj stats --json").at("exports").at("data");
  CHECK(data.at("ops").at("write").at("count") == 1);
  CHECK(data.at("ops").at("write").at("bytes") == 8192);
  CHECK(data.at("ops").at("flush").at("count") == 1);
  r = nvj::cli::run({NVJ_BINARY, "stats", "--metrics", "--reset", control});
  CHECK_THAT(r.output, Catch::Contains("nvjournal_requests_total{export=\"data\",op=\"write\"} 0"));

  r = nvj::cli::run({NVJ_BINARY, "stats", dir.file("nothing.sock")});
  CHECK(r.status == 1);
  CHECK_THAT(r.output, Catch::Contains("control socket " + dir.file("nothing.sock") + ": no such file or directory"));
  r = nvj::cli::run({NVJ_BINARY, "stats"});
  CHECK(r.status == 2);
  CHECK_THAT(r.output, Catch::Contains("which server?"));
  r = nvj::cli::run({NVJ_BINARY, "stats", "--interval", "0", control});
  CHECK(r.status == 2);
  CHECK(server->stop() == 0);
}

TEST_CASE("nvj bench measures an export and refuses bad options", "[nvj]") {
  TempDir dir;
  auto server = start_server(dir.path / "run", {"data=64M", "data-model=none", "journal-model=none"});
  const std::string uri = server->uri("journal");
  auto r = nvj::cli::run({NVJ_BINARY, "bench", "--duration", "1", "--depth", "4", "--write-percent", "50", uri});
  CHECK(r.status == 0);
  CHECK_THAT(r.output, Catch::Contains("4096-byte random 50% writes, depth 4"));
  CHECK_THAT(r.output, Catch::Contains("IOPS"));
  CHECK_THAT(r.output, Catch::Contains("latency us: p50 "));
  r = nvj::cli::run({NVJ_BINARY, "bench", "--json", "--duration", "1", "--pattern", "sequential", "--block-size",
                     "64K", "--span", "1M", uri});
  REQUIRE(r.status == 0);
  const nvj::Json j = nvj::parse_json(r.output, "nvj bench --json");
  CHECK(j["uri"] == uri);
  CHECK(j["block_size"] == 65536);
  CHECK(j["write_percent"] == 100);
  CHECK(j["pattern"] == "sequential");
  CHECK(j["requests"].get<std::uint64_t>() > 0);

  const std::vector<std::pair<std::vector<std::string>, std::string>> bad{
      {{"--depth", "0", uri}, "--depth=0: expected a whole number from 1 to 256"},
      {{"--block-size", "64Q", uri}, "--block-size=64Q: '64Q' is not a size"},
      {{"--block-size", "64M", uri}, "--block-size=64M: expected a size from 1 byte to 32 MiB"},
      {{"--write-percent", "101", uri}, "--write-percent=101: expected a whole number from 0 to 100"},
      {{"--pattern", "zigzag", uri}, "--pattern=zigzag: expected random or sequential"},
      {{"--duration", "0", uri}, "--duration=0: expected a whole number from 1 to 3600"},
      {{"--bogus", uri}, "unknown option '--bogus'"},
      {{}, "which export?"},
  };
  for (const auto& [args, message] : bad) {
    std::vector<std::string> argv{NVJ_BINARY, "bench"};
    argv.insert(argv.end(), args.begin(), args.end());
    r = nvj::cli::run(argv);
    INFO(nvj::cli::quote(argv));
    CHECK(r.status == 2);
    CHECK_THAT(r.output, Catch::Contains(message));
  }
  r = nvj::cli::run({NVJ_BINARY, "bench", "--duration", "1", "--span", "1G", uri});
  CHECK(r.status == 1);
  CHECK_THAT(r.output, Catch::Contains("the span lies beyond the export"));
  r = nvj::cli::run({NVJ_BINARY, "bench", "--duration", "1", server->uri("nosuch")});
  CHECK(r.status == 1);
  CHECK_THAT(r.output, Catch::Contains("server has no export named 'nosuch'"));
  CHECK(server->stop() == 0);
}

}  // namespace control_socket_test
