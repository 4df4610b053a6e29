// SPDX-License-Identifier: BSD-3-Clause
// The crash lab's recording through the real nbdkit: record= from the start
// and POST /record/start at run time, libnbd clients writing to both
// exports, the control API's answers, and the file read back with fscore's
// FrameReader: replayed, it equals what the exports hold, byte for byte.
#include <catch2/catch.hpp>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "common/control_client.h"
#include "fscore/record/frame_reader.h"
#include "fscore/record/replayed_exports.h"
#include "server_fixture.h"
#include "tests/support/file_bytes.h"
#include "tools/nvj/host/files/text_file.h"
#include "tools/nvj/host/processes/process.h"

namespace recording_test {

using fscore::record::FrameKind;
using fscore::record::FrameReader;
using fscore::record::ReplayedExports;
using nvj::Json;
using nvj::test::connect;
using nvj::test::control_json;
using nvj::test::start_server;
using nvj::test::file_bytes;
using nvj::test::TempDir;

namespace {

std::vector<char> block(std::size_t n, char fill) { return std::vector<char>(n, fill); }

// The whole export, read through NBD.
std::vector<std::uint8_t> export_contents(nbd_handle* h) {
  const std::int64_t size = nbd_get_size(h);
  REQUIRE(size > 0);
  std::vector<std::uint8_t> out(static_cast<std::size_t>(size));
  for (std::int64_t at = 0; at < size; at += 1 << 20) {
    const std::size_t n = static_cast<std::size_t>(std::min<std::int64_t>(1 << 20, size - at));
    REQUIRE(nbd_pread(h, out.data() + at, n, static_cast<std::uint64_t>(at), 0) == 0);
  }
  return out;
}

struct Counts {
  std::size_t base = 0, changes = 0, acks = 0, flushes = 0, flushes_done = 0;
  std::vector<std::string> marks;
};

// Reads the rest of the recording (every frame checked), replays it, and counts.
Counts replay(ReplayedExports& into, FrameReader& r) {
  Counts c;
  while (auto f = r.next()) {
    into.apply(*f);
    if (f->kind == FrameKind::base) ++c.base;
    if (f->kind == FrameKind::write || f->kind == FrameKind::zero || f->kind == FrameKind::trim) ++c.changes;
    if (f->kind == FrameKind::ack) ++c.acks;
    if (f->kind == FrameKind::flush) ++c.flushes;
    if (f->kind == FrameKind::flush_done) ++c.flushes_done;
    if (f->kind == FrameKind::mark) c.marks.emplace_back(f->text);
  }
  return c;
}

}  // namespace

TEST_CASE("record= records both exports from the start, and the recording rebuilds them", "[recording]") {
  TempDir dir;
  const std::string control = dir.file("control.sock");
  const std::string path = dir.file("run.nvjrec");
  auto server = start_server(dir.path / "run", {"data=64M", "journal=8M", "control=" + control, "record=" + path,
                                                "data-model=none", "journal-model=none",
                                                "journal-write-cache=write-back"});  // FUA on the journal too
  {
    auto data = connect(*server, "data");
    auto journal = connect(*server, "journal");
    REQUIRE(nbd_pwrite(data.get(), block(8192, 'D').data(), 8192, 1 << 20, 0) == 0);
    REQUIRE(nbd_pwrite(journal.get(), block(4096, 'J').data(), 4096, 4096, LIBNBD_CMD_FLAG_FUA) == 0);
    REQUIRE(nbd_flush(data.get(), 0) == 0);
    control_json(control, "POST", "/mark?label=file%20a%20is%20durable");
    REQUIRE(nbd_zero(data.get(), 4096, (1 << 20) + 4096, 0) == 0);
    REQUIRE(nbd_trim(data.get(), 65536, 8 << 20, 0) == 0);
    REQUIRE(nbd_pwrite(data.get(), block(4096, 'E').data(), 4096, 60 << 20, 0) == 0);

    const Json running = control_json(control, "GET", "/record");
    CHECK(running.at("recording") == true);
    CHECK(running.at("file") == path);
    CHECK(running.at("changes").get<std::uint64_t>() >= 5);
    CHECK(running.at("base_bytes").get<std::uint64_t>() > 0);  // the ext4 the server built
    // One recording at a time.
    const auto second = nvj::control_request(control, "POST", "/record/start?file=" + dir.file("two.nvjrec"));
    CHECK(second.status == 409);
    CHECK_THAT(second.body, Catch::Contains("a recording is running"));
    CHECK_FALSE(std::filesystem::exists(dir.file("two.nvjrec")));

    const Json stopped = control_json(control, "POST", "/record/stop");
    CHECK(stopped.at("recording") == false);
    CHECK(stopped.at("error").is_null());
    // After the stop, nothing more is recorded.
    REQUIRE(nbd_pwrite(data.get(), block(4096, 'L').data(), 4096, 61 << 20, 0) == 0);
    CHECK(control_json(control, "GET", "/record").at("changes") == stopped.at("changes"));

    const auto file = file_bytes(path);
    CHECK(file.size() == stopped.at("bytes_written").get<std::uint64_t>());
    FrameReader r(file);
    REQUIRE(r.exports().size() == 2);
    CHECK(r.exports()[0].name == "data");
    CHECK(r.exports()[0].size == 64u << 20);
    CHECK(r.exports()[1].name == "journal");
    CHECK(r.exports()[1].size == 8u << 20);
    ReplayedExports replayed(r.exports());
    const Counts c = replay(replayed, r);
    CHECK_FALSE(r.stopped());
    CHECK(c.base > 0);
    CHECK(c.changes == 5);
    CHECK(c.acks == 5);
    CHECK(c.flushes == 1);
    CHECK(c.flushes_done == 1);
    CHECK(c.marks == std::vector<std::string>{"file a is durable"});

    // The replay is the exports, but for the write made after the stop.
    std::vector<std::uint8_t> want = export_contents(data.get());
    std::fill(want.begin() + (61 << 20), want.begin() + (61 << 20) + 4096, 0);
    std::vector<std::uint8_t> got(want.size());
    replayed.read(0, 0, got);
    CHECK(got == want);
    want = export_contents(journal.get());
    got.assign(want.size(), 0);
    replayed.read(1, 0, got);
    CHECK(got == want);
  }
  CHECK(server->stop() == 0);
}

TEST_CASE("a recording starts and stops at run time, and a power cut ends it", "[recording]") {
  TempDir dir;
  const std::string control = dir.file("control.sock");
  auto server = start_server(dir.path / "run", {"data=64M", "journal=8M", "control=" + control});
  // Nothing recorded yet; bad requests change nothing.
  CHECK(nvj::control_request(control, "GET", "/record").status == 404);
  CHECK(nvj::control_request(control, "POST", "/record/stop").status == 409);
  CHECK(nvj::control_request(control, "POST", "/record/start").status == 400);
  const auto relative = nvj::control_request(control, "POST", "/record/start?file=run.nvjrec");
  CHECK(relative.status == 400);
  CHECK_THAT(relative.body, Catch::Contains("absolute path"));
  const std::string existing = dir.file("existing");
  std::ofstream(existing) << "precious";
  const auto over = nvj::control_request(control, "POST", "/record/start?file=" + existing);
  CHECK(over.status == 409);
  CHECK_THAT(over.body, Catch::Contains("never overwrites"));
  CHECK(nvj::cli::read_text_file(existing) == "precious");
  CHECK(nvj::control_request(control, "GET", "/record/start").status == 405);

  const std::string path = dir.file("later.nvjrec");
  auto data = connect(*server, "data");
  REQUIRE(nbd_pwrite(data.get(), block(4096, 'B').data(), 4096, 32 << 20, 0) == 0);  // before: in the base
  const Json started = control_json(control, "POST", "/record/start?file=" + path);
  CHECK(started.at("recording") == true);
  REQUIRE(nbd_pwrite(data.get(), block(4096, 'A').data(), 4096, 33 << 20, 0) == 0);
  control_json(control, "POST", "/crash");
  const Json ended = control_json(control, "GET", "/record");
  CHECK(ended.at("recording") == false);
  CHECK_THAT(ended.at("error").get<std::string>(), Catch::Contains("the power was cut"));
  control_json(control, "POST", "/power-on");

  const auto file = file_bytes(path);
  FrameReader r(file);
  ReplayedExports replayed(r.exports());
  const Counts c = replay(replayed, r);
  CHECK(r.stopped());
  CHECK_THAT(r.stop_reason(), Catch::Contains("the power was cut"));
  CHECK(c.changes == 1);
  std::vector<std::uint8_t> got(4096);
  replayed.read(0, 32 << 20, got);
  CHECK(got == std::vector<std::uint8_t>(4096, 'B'));
  replayed.read(0, 33 << 20, got);
  CHECK(got == std::vector<std::uint8_t>(4096, 'A'));
  data.reset();
  CHECK(server->stop() == 0);
}

TEST_CASE("nvj mark posts a label as written, into the statistics and a running recording", "[recording]") {
  TempDir dir;
  const std::string control = dir.file("control.sock");
  const std::string path = dir.file("marks.nvjrec");
  auto server = start_server(dir.path / "run", {"data=64M", "journal=8M", "control=" + control, "record=" + path});
  const std::string label = "file a/b c&d=e 100% \xc3\xa9t\xc3\xa9 durable";
  // Words joined by spaces; the socket from --control or NVJ_CONTROL.
  auto r = nvj::cli::run({NVJ_BINARY, "mark", "--control", control, "file", "a/b", "c&d=e", "100%",
                          "\xc3\xa9t\xc3\xa9", "durable"});
  INFO(r.output);
  CHECK(r.status == 0);
  r = nvj::cli::run({NVJ_BINARY, "mark", "second"}, {"NVJ_CONTROL=" + control});
  CHECK(r.status == 0);
  // Mistakes are usage errors, and nothing is posted.
  r = nvj::cli::run({NVJ_BINARY, "mark", "x"}, {"NVJ_CONTROL="});
  CHECK(r.status == 2);
  CHECK_THAT(r.output, Catch::Contains("nvj mark: which server?"));
  r = nvj::cli::run({NVJ_BINARY, "mark", "--control", control});
  CHECK(r.status == 2);
  CHECK_THAT(r.output, Catch::Contains("nvj mark: what label?"));
  r = nvj::cli::run({NVJ_BINARY, "mark", "--control", control, std::string(1025, 'x')});
  CHECK(r.status == 2);
  CHECK_THAT(r.output, Catch::Contains("at most 1024 bytes"));
  r = nvj::cli::run({NVJ_BINARY, "mark", "--control", dir.file("no.sock"), "x"});
  CHECK(r.status == 1);
  CHECK_THAT(r.output, Catch::Contains("no.sock"));

  const Json stats = control_json(control, "GET", "/stats");
  std::vector<std::string> marks;
  for (const auto& m : stats.at("marks")) marks.push_back(m.at("label"));
  CHECK(marks == std::vector<std::string>{label, "second"});
  control_json(control, "POST", "/record/stop");
  const auto file = file_bytes(path);
  FrameReader reader(file);
  ReplayedExports replayed(reader.exports());
  CHECK(replay(replayed, reader).marks == std::vector<std::string>{label, "second"});
  CHECK(server->stop() == 0);
}

TEST_CASE("a recording outlives nbdkit's fork into the background whole", "[recording]") {
  // nbdkit's default: the plugin opens the lab (and the recording) before it
  // forks; the parent exits, destroying its copy. The recording the child
  // ends must read back whole, with the child's frames in it.
  TempDir dir;
  const std::string control = dir.file("control.sock");
  const std::string path = dir.file("forked.nvjrec");
  nvj::test::ForkedServer server(dir, {"data=64M", "data-model=none", "journal-model=none", "control=" + control,
                                       "record=" + path});
  INFO(server.parent.output);
  REQUIRE(server.parent.status == 0);  // the parent's exit
  REQUIRE_THAT(server.pid_line, Catch::EndsWith("\n"));
  control_json(control, "POST", "/mark?label=in%20the%20child");
  CHECK(control_json(control, "GET", "/record").at("recording") == true);
  REQUIRE(server.stop(std::chrono::seconds(10)));  // the child ends the recording as it unloads

  const auto file = file_bytes(path);
  FrameReader reader(file);
  ReplayedExports replayed(reader.exports());
  const Counts c = replay(replayed, reader);  // throws if it is not whole
  CHECK_FALSE(reader.stopped());
  CHECK(c.base > 0);
  CHECK(c.marks == std::vector<std::string>{"in the child"});
}

}  // namespace recording_test
