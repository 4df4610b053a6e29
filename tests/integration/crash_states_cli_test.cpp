// SPDX-License-Identifier: BSD-3-Clause
// nvj crash states against a recording made by a real nbdkit: a client's
// writes, flush and FUA write, and a fact marked between them, counted as
// crash points and states; its JSON against the published schema; and a
// recording that is missing, cut short or holds a malformed fact refused
// naming what is wrong, and nvj crash check of one with no filesystem, or
// with a --recovery-kernel that is no release, and a --structure that is
// neither every nor none, too.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "common/json.h"
#include "server_fixture.h"
#include "tests/support/file_bytes.h"
#include "tests/support/json_schema.h"
#include "tools/nvj/host/processes/process.h"

namespace crash_states_cli_test {

using nvj::Json;
using nvj::test::connect;
using nvj::test::control_json;
using nvj::test::start_server;
using nvj::test::TempDir;

namespace {

// A recording of: write A, flush, write B, the fact, write C with FUA, write
// D; the journal export untouched.
std::string record_run(TempDir& dir) {
  const std::string control = dir.file("control.sock");
  const std::string path = dir.file("run.nvjrec");
  auto server = start_server(dir.path / "run", {"data=64M", "journal=8M", "fs=none", "control=" + control,
                                                "record=" + path, "data-model=none", "journal-model=none"});
  {
    auto data = connect(*server, "data");
    const std::vector<char> a(4096, 'A'), b(4096, 'B'), c(4096, 'C'), d(4096, 'D');
    REQUIRE(nbd_pwrite(data.get(), a.data(), a.size(), 0, 0) == 0);
    REQUIRE(nbd_flush(data.get(), 0) == 0);
    REQUIRE(nbd_pwrite(data.get(), b.data(), b.size(), 4096, 0) == 0);
    control_json(control, "POST", "/mark?label=fact%20entry%20.%20x");
    REQUIRE(nbd_pwrite(data.get(), c.data(), c.size(), 8192, LIBNBD_CMD_FLAG_FUA) == 0);
    REQUIRE(nbd_pwrite(data.get(), d.data(), d.size(), 0, 0) == 0);  // over A
  }
  control_json(control, "POST", "/record/stop");
  CHECK(server->stop() == 0);
  return path;
}

}  // namespace

TEST_CASE("nvj crash states counts a recording's crash points and states", "[crash]") {
  TempDir dir;
  const std::string path = record_run(dir);
  auto r = nvj::cli::run({NVJ_BINARY, "crash", "states", path, "--json"});
  INFO(r.output);
  REQUIRE(r.status == 0);
  const auto verdict = nvj::test::check_schema("crash-states", r.output, "crash-states");
  INFO(verdict.report);
  CHECK(verdict.valid);
  const Json j = nvj::parse_json(r.output, "nvj crash states --json");
  CHECK(j.at("changes") == 4);
  CHECK(j.at("flushes") == 1);
  CHECK(j.at("marks") == 1);
  CHECK(j.at("facts") == 1);
  CHECK(j.at("stopped").is_null());
  // After the flush (A durable), after the mark (B volatile), after C's
  // durable acknowledgement (B still volatile), at the end (B and D).
  const Json& p = j.at("points");
  CHECK(p.at("total") == 4);
  CHECK(p.at("at_marks") == 1);
  CHECK(p.at("at_persistence") == 2);
  CHECK(p.at("volatile_max") == 2);
  const Json& s = j.at("strategies");
  CHECK(s.at("none").at("states") == 4);
  CHECK(s.at("all").at("states") == 3);    // the points with something volatile
  CHECK(s.at("keep1").at("states") == 4);  // B, B, B and D
  CHECK(s.at("keep2").at("states") == 1);  // B and D at the end
  CHECK(s.at("prefix").at("states") == 1);
  // Contents (D lands over A): A before the mark; after it A again (new:
  // the mark's fact was not checked against it), A+B, A+C, A+B+C, C+D,
  // B+C+D. The other states repeat one since the mark: keep1 of B at the
  // mark is all, and so on.
  CHECK(j.at("unique") == 7);
  CHECK(s.at("none").at("unique") == 3);  // A before the mark, A after it, A+C
  CHECK(s.at("keep1").at("unique") == 1);  // C+D at the end
  CHECK(j.at("merged_by_contents") == true);

  r = nvj::cli::run({NVJ_BINARY, "crash", "states", path, "--keep", "0", "--random", "5", "--every", "1"});
  INFO(r.output);
  REQUIRE(r.status == 0);
  CHECK_THAT(r.output, Catch::Contains("crash points: ") && Catch::Contains("after every 1 changes") &&
                           Catch::Contains("random"));
}

TEST_CASE("nvj crash states refuses what is no recording, naming the problem", "[crash]") {
  TempDir dir;
  auto r = nvj::cli::run({NVJ_BINARY, "crash", "states"});
  CHECK(r.status == 2);
  CHECK_THAT(r.output, Catch::Contains("which RECORDING?"));
  r = nvj::cli::run({NVJ_BINARY, "crash", "states", dir.file("none.nvjrec")});
  CHECK(r.status == 1);
  CHECK_THAT(r.output, Catch::Contains("cannot open") && Catch::Contains("none.nvjrec"));
  r = nvj::cli::run({NVJ_BINARY, "crash", "states", dir.file("x"), "--keep", "3"});
  CHECK(r.status == 2);

  const std::string path = record_run(dir);
  // A recording with no filesystem where it starts is bad input (2), not a
  // failing verdict (1).
  r = nvj::cli::run({NVJ_BINARY, "crash", "check", path});
  CHECK(r.status == 2);
  CHECK_THAT(r.output, Catch::Contains("no ext4, XFS or btrfs on the data export where the recording starts"));
  // A --recovery-kernel that is no Linux release: named, before anything is read.
  for (const char* bad : {"linux", "6", "debian:sid"}) {
    r = nvj::cli::run({NVJ_BINARY, "crash", "check", path, "--recovery-kernel", bad});
    CHECK(r.status == 2);
    CHECK_THAT(r.output, Catch::Contains(std::string("--recovery-kernel ") + bad + ": expected a Linux release"));
  }
  // A --structure that is neither every nor none: named, for check and explore.
  r = nvj::cli::run({NVJ_BINARY, "crash", "check", path, "--structure", "some"});
  CHECK(r.status == 2);
  CHECK_THAT(r.output, Catch::Contains("--structure=some: expected every or none"));
  r = nvj::cli::run({NVJ_BINARY, "crash", "explore", "--structure", "some", "--out", dir.file("explored")});
  CHECK(r.status == 2);
  CHECK_THAT(r.output, Catch::Contains("--structure=some: expected every or none"));
  auto bytes = nvj::test::file_bytes(path);
  const std::string cut = dir.file("cut.nvjrec");
  std::ofstream(cut, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()),
                                             static_cast<std::streamsize>(bytes.size() - 10));
  r = nvj::cli::run({NVJ_BINARY, "crash", "states", cut});
  CHECK(r.status == 1);
  CHECK_THAT(r.output, Catch::Contains("nvj crash states: recording: byte ") && Catch::Contains("truncated"));

  // A mark that starts like a fact and is not one.
  TempDir other;
  const std::string control = other.file("control.sock");
  const std::string bad = other.file("bad.nvjrec");
  auto server = start_server(other.path / "run", {"data=8M", "fs=none", "control=" + control, "record=" + bad});
  control_json(control, "POST", "/mark?label=fact%20remove%20%2Fetc");
  control_json(control, "POST", "/record/stop");
  CHECK(server->stop() == 0);
  r = nvj::cli::run({NVJ_BINARY, "crash", "states", bad});
  CHECK(r.status == 1);
  CHECK_THAT(r.output, Catch::Contains("mark 1 (frame ") && Catch::Contains("an absolute path"));
}

}  // namespace crash_states_cli_test
