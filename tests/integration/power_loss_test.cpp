// SPDX-License-Identifier: BSD-3-Clause
// Power cuts through the control socket against the real nbdkit, checked by
// a libnbd client (docs/design.md, "The durability contract"): a data disk
// with a volatile cache loses what was neither flushed nor FUA; NVRAM and
// cache-off devices lose nothing acknowledged; requests fail with EIO until
// power-on; the same seed loses the same writes.
#include <catch2/catch.hpp>

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <string>
#include <vector>

#include "server_fixture.h"
#include "tests/support/json_schema.h"
#include "common/control_client.h"

namespace power_loss_test {

using nvj::Json;
using nvj::test::check_valid;
using nvj::test::connect;
using nvj::test::control_json;
using nvj::test::start_server;
using nvj::test::TempDir;

namespace {

std::vector<char> block(char fill) { return std::vector<char>(4096, fill); }

char first_byte(nbd_handle* h, std::uint64_t offset) {
  std::vector<char> b(4096);
  REQUIRE(nbd_pread(h, b.data(), b.size(), offset, 0) == 0);
  return b[0];
}

// Whether every export is powered, from GET /stats (checked against its schema).
std::vector<bool> powered(const std::string& control) {
  const std::string body = nvj::control_call(control, "GET", "/stats");
  check_valid("stats", body);
  const Json stats = nvj::parse_json(body, "GET /stats");
  std::vector<bool> out;
  for (const auto& e : stats.at("exports")) out.push_back(e.at("powered"));
  return out;
}

}  // namespace

TEST_CASE("a power cut drops unflushed data-disk writes and keeps flushed, FUA and NVRAM ones", "[power]") {
  TempDir dir;
  const std::string control = dir.file("control.sock");
  auto server = start_server(dir.path / "run", {"data=64M", "journal=8M", "control=" + control,
                                                "data-model=hdd:cache=on", "journal-model=nvram"});
  {
    auto data = connect(*server, "data");
    auto journal = connect(*server, "journal");
    REQUIRE(nbd_pwrite(data.get(), block('F').data(), 4096, 0, 0) == 0);
    REQUIRE(nbd_flush(data.get(), 0) == 0);                                        // durable
    REQUIRE(nbd_pwrite(data.get(), block('U').data(), 4096, 0, 0) == 0);           // volatile, over it
    REQUIRE(nbd_pwrite(data.get(), block('A').data(), 4096, 8192, LIBNBD_CMD_FLAG_FUA) == 0);  // durable
    REQUIRE(nbd_pwrite(data.get(), block('V').data(), 4096, 16384, 0) == 0);       // volatile
    for (int i = 0; i < 16; ++i)                                                   // NVRAM: durable on ack
      REQUIRE(nbd_pwrite(journal.get(), block(static_cast<char>('a' + i)).data(), 4096,
                         static_cast<std::uint64_t>(i) * 4096, 0) == 0);

    const Json cut = control_json(control, "POST", "/crash?policy=all");
    CHECK(cut.at("policy") == "all");
    CHECK(cut.at("exports").at("data") ==
          Json{{"durable", 1}, {"volatile_kept", 0}, {"volatile_lost", 2}, {"in_flight", 0}, {"bytes_lost", 8192},
               {"torn", 4096}});  // the hdd's physical sector
    CHECK(cut.at("exports").at("journal") ==
          Json{{"durable", 0}, {"volatile_kept", 0}, {"volatile_lost", 0}, {"in_flight", 0}, {"bytes_lost", 0},
               {"torn", 512}});
    CHECK_FALSE(cut.contains("torn"));  // not given: each export's model's unit

    // Off: every request fails with EIO, reads too.
    std::vector<char> b(4096);
    CHECK(nbd_pread(data.get(), b.data(), b.size(), 0, 0) == -1);
    CHECK(nbd_get_errno() == EIO);
    CHECK(nbd_pwrite(journal.get(), b.data(), b.size(), 0, 0) == -1);
    CHECK(powered(control) == std::vector<bool>{false, false});

    CHECK(control_json(control, "POST", "/power-on") == Json{{"power", "on"}});
    CHECK(powered(control) == std::vector<bool>{true, true});
    CHECK(first_byte(data.get(), 0) == 'F');      // the flushed write, not the volatile one over it
    CHECK(first_byte(data.get(), 8192) == 'A');   // FUA
    CHECK(first_byte(data.get(), 16384) == 0);    // lost
    for (int i = 0; i < 16; ++i) CHECK(first_byte(journal.get(), static_cast<std::uint64_t>(i) * 4096) == 'a' + i);
    // Writable again, and the next cut has nothing to lose.
    REQUIRE(nbd_pwrite(data.get(), block('N').data(), 4096, 32768, LIBNBD_CMD_FLAG_FUA) == 0);
  }
  CHECK(server->stop() == 0);
}

TEST_CASE("a cache-off disk loses nothing acknowledged", "[power]") {
  TempDir dir;
  const std::string control = dir.file("control.sock");
  auto server = start_server(dir.path / "run", {"data=64M", "control=" + control, "data-model=ssd:cache=off"});
  {
    auto data = connect(*server, "data");
    for (int i = 0; i < 32; ++i)
      REQUIRE(nbd_pwrite(data.get(), block('S').data(), 4096, static_cast<std::uint64_t>(i) * 4096, 0) == 0);
    const Json cut = control_json(control, "POST", "/crash?policy=random&seed=5&export=data");
    CHECK(cut.at("policy") == "random");
    CHECK(cut.at("seed") == 5);
    CHECK(cut.at("exports").size() == 1);
    CHECK(cut.at("exports").at("data").at("volatile_lost") == 0);
    CHECK(cut.at("exports").at("data").at("bytes_lost") == 0);
    CHECK(cut.at("exports").at("data").at("torn") == 4096);  // the SSD's atomic unit
    CHECK(control_json(control, "POST", "/power-on?export=data") == Json{{"power", "on"}});
    for (int i = 0; i < 32; ++i) CHECK(first_byte(data.get(), static_cast<std::uint64_t>(i) * 4096) == 'S');
  }
  CHECK(server->stop() == 0);
}

TEST_CASE("random loss is the same for the same seed", "[power]") {
  auto survivors = [](std::uint64_t seed) {
    TempDir dir;
    const std::string control = dir.file("control.sock");
    auto server = start_server(dir.path / "run", {"data=64M", "control=" + control, "data-model=none"});
    std::string kept;
    {
      auto data = connect(*server, "data");
      for (int i = 0; i < 48; ++i)
        REQUIRE(nbd_pwrite(data.get(), block('R').data(), 4096, static_cast<std::uint64_t>(i) * 4096, 0) == 0);
      nvj::control_call(control, "POST", "/crash?policy=random&seed=" + std::to_string(seed));
      nvj::control_call(control, "POST", "/power-on");
      for (int i = 0; i < 48; ++i) kept += first_byte(data.get(), static_cast<std::uint64_t>(i) * 4096) == 'R' ? 'k' : '-';
    }
    CHECK(server->stop() == 0);
    return kept;
  };
  const std::string a = survivors(11);
  CHECK(a == survivors(11));
  CHECK(a != survivors(12));
  CHECK(a.find('k') != std::string::npos);
  CHECK(a.find('-') != std::string::npos);
}

TEST_CASE("bad crash requests change nothing", "[power]") {
  TempDir dir;
  const std::string control = dir.file("control.sock");
  auto server = start_server(dir.path / "run", {"control=" + control, "data-model=none"});
  for (const char* bad : {"/crash?policy=some", "/crash?torn=12Q", "/crash?export=nosuch", "/crash?seed=x",
                          "/power-on?export=nosuch"}) {
    const auto r = nvj::control_request(control, "POST", bad);
    INFO(bad << ": " << r.body);
    CHECK(r.status == 400);
    CHECK_FALSE(nvj::parse_json(r.body, bad).at("error").get<std::string>().empty());
  }
  CHECK(powered(control) == std::vector<bool>{true, true});
  CHECK(nvj::control_request(control, "GET", "/crash").status == 405);
  CHECK(server->stop() == 0);
}

}  // namespace power_loss_test
