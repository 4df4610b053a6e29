// SPDX-License-Identifier: BSD-3-Clause
// The server's base (POST /base/keep, /base/restore) against the real
// nbdkit, read back by a libnbd client: a restore puts every export back to
// what it held at the keep, whatever was written since (whole blocks, part
// blocks, zeroes, trims, volatile and durable), empties the power-loss log
// (a cut after it loses nothing), and is refused before any keep and while
// a recording runs.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "server_fixture.h"
#include "common/control_client.h"

namespace base_restore_test {

using nvj::Json;
using nvj::test::connect;
using nvj::test::control_json;
using nvj::test::start_server;
using nvj::test::TempDir;

namespace {

std::vector<char> read_back(nbd_handle* h, std::uint64_t offset, std::size_t n) {
  std::vector<char> b(n);
  REQUIRE(nbd_pread(h, b.data(), n, offset, 0) == 0);
  return b;
}

}  // namespace

TEST_CASE("a restore puts every export back to its kept base", "[base]") {
  TempDir dir;
  const std::string control = dir.file("control.sock");
  auto server = start_server(dir.path / "run", {"data=64M", "journal=8M", "control=" + control,
                                                "data-model=hdd:cache=on", "journal-model=nvram",
                                                "data-trim=yes"});  // trims to put back too
  auto data = connect(*server, "data");
  auto journal = connect(*server, "journal");
  const std::vector<char> a(10000, 'a'), j(4096, 'j');
  REQUIRE(nbd_pwrite(data.get(), a.data(), a.size(), 1000, 0) == 0);
  REQUIRE(nbd_pwrite(journal.get(), j.data(), j.size(), 0, 0) == 0);
  REQUIRE(nbd_flush(data.get(), 0) == 0);

  // Another method than POST: refused.
  CHECK_THROWS_WITH(nvj::control_call(control, "GET", "/base/keep"), Catch::Contains("takes POST"));
  // Restore before any keep: refused, nothing changes.
  CHECK_THROWS_WITH(nvj::control_call(control, "POST", "/base/restore"), Catch::Contains("no base was kept"));

  const Json kept = control_json(control, "POST", "/base/keep");
  CHECK(kept.at("base") == "kept");
  const std::vector<char> before_data = read_back(data.get(), 0, 65536);
  const std::vector<char> before_journal = read_back(journal.get(), 0, 8192);

  for (int round = 0; round < 3; ++round) {
    const std::vector<char> b(3000, static_cast<char>('0' + round)), z(4096, 'z');
    REQUIRE(nbd_pwrite(data.get(), b.data(), b.size(), 2500, 0) == 0);   // part blocks over the base
    REQUIRE(nbd_pwrite(data.get(), z.data(), z.size(), 40960, LIBNBD_CMD_FLAG_FUA) == 0);  // a block the base lacks
    REQUIRE(nbd_zero(data.get(), 4096, 4096, 0) == 0);
    REQUIRE(nbd_trim(data.get(), 500, 8000, 0) == 0);
    REQUIRE(nbd_pwrite(journal.get(), z.data(), z.size(), 4096, 0) == 0);
    CHECK(read_back(data.get(), 0, 65536) != before_data);
    const Json restored = control_json(control, "POST", "/base/restore");
    CHECK(restored.at("base") == "restored");
    CHECK(restored.at("exports").at("data").at("pages_written").get<int>() >= 3);
    CHECK(read_back(data.get(), 0, 65536) == before_data);
    CHECK(read_back(journal.get(), 0, 8192) == before_journal);
  }

  // The volatile writes went with the restore: a cut now loses nothing.
  const Json cut = control_json(control, "POST", "/crash?policy=all");
  CHECK(cut.at("exports").at("data").at("volatile_lost") == 0);
  control_json(control, "POST", "/power-on");
  CHECK(read_back(data.get(), 0, 65536) == before_data);

  // Not while a recording runs.
  control_json(control, "POST", "/record/start?file=" + dir.file("r.nvjrec"));
  CHECK_THROWS_WITH(nvj::control_call(control, "POST", "/base/restore"), Catch::Contains("a recording is running"));
  CHECK_THROWS_WITH(nvj::control_call(control, "POST", "/base/keep"), Catch::Contains("a recording is running"));
  control_json(control, "POST", "/record/stop");
  CHECK(control_json(control, "POST", "/base/restore").at("base") == "restored");
}

}  // namespace base_restore_test
