// SPDX-License-Identifier: BSD-3-Clause
// The filesystem the server starts with, through the real nbdkit and libnbd:
// the image read back from the export by fscore's reader, the internal
// journal's region timed and made durable as the journal device (a power
// cut keeps its acknowledged writes and drops the data disk's volatile
// ones), a file-backed filesystem served back as it is after a restart, and
// fs-format=force.
#include <catch2/catch.hpp>

#include <fstream>
#include <string>
#include <vector>

#include "common/control_client.h"
#include "fscore/ext4/image_reader.h"
#include "fscore/record/frame_reader.h"
#include "fscore/record/old_data.h"
#include "server_fixture.h"
#include "tests/support/file_bytes.h"
#include "tests/support/json_schema.h"
#include "tools/nvj/client/server_address.h"
#include "tools/nvj/host/processes/process.h"

namespace filesystem_test {

using nvj::Json;
using nvj::test::check_valid;
using nvj::test::connect;
using nvj::test::start_server;
using nvj::test::TempDir;

namespace {

// An export read through libnbd, for fscore's image reader.
class NbdSource final : public fscore::BlockSource {
 public:
  explicit NbdSource(nbd_handle* h) : h_(h) {}
  std::uint64_t size() const override { return static_cast<std::uint64_t>(nbd_get_size(h_)); }
  void read(std::uint64_t offset, std::span<std::uint8_t> bytes) const override {
    if (nbd_pread(h_, bytes.data(), bytes.size(), offset, 0) != 0) throw std::runtime_error(nbd_get_error());
  }

 private:
  nbd_handle* h_;
};

std::vector<char> block(char fill, std::size_t size) { return std::vector<char>(size, fill); }

char first_byte(nbd_handle* h, std::uint64_t offset) {
  char b = 0;
  REQUIRE(nbd_pread(h, &b, 1, offset, 0) == 0);
  return b;
}

std::string post(const std::string& control, const std::string& target) {
  const auto r = nvj::control_request(control, "POST", target);
  return std::to_string(r.status) + " " + r.body;
}

// GET /stats, checked against its schema, parsed.
Json stats_of(const std::string& control) {
  const std::string body = nvj::control_call(control, "GET", "/stats");
  check_valid("stats", body);
  return nvj::parse_json(body, "GET /stats");
}

// GET /journal, checked against its schema, parsed.
Json journal_of(const std::string& control) {
  const std::string body = nvj::control_call(control, "GET", "/journal");
  check_valid("journal", body);
  return nvj::parse_json(body, "GET /journal");
}

bool starts_with(const Json& text, const std::string& prefix) { return text.get<std::string>().rfind(prefix, 0) == 0; }

}  // namespace

TEST_CASE("an internal journal's region keeps every acknowledged write through a power cut", "[fs][power]") {
  TempDir dir;
  const std::string control = dir.file("control.sock");
  auto server = start_server(dir.path / "run", {"data=256M", "fs-journal=internal:8M", "fs-block-size=4096",
                                                "control=" + control, "data-model=hdd:cache=on",
                                                "journal-model=nvram"});
  {
    auto data = connect(*server, "data");
    const auto exports = nvj::cli::ServerAddress::parse(server->socket()).list_exports();
    CHECK(exports.size() == 1);  // no journal export
    const fscore::ext4::ImageInfo info = fscore::ext4::read_image(NbdSource(data.get()));
    REQUIRE(info.journal == fscore::ext4::JournalKind::kInternal);
    REQUIRE(info.block_size == 4096);
    std::uint64_t journal_blocks = 0;
    for (const auto& r : info.journal_runs) journal_blocks += r.count;
    CHECK(journal_blocks == 2048);
    const std::uint64_t in_journal = (info.journal_runs.front().start + 10) * 4096;
    const std::uint64_t outside = (info.blocks - 1) * 4096;
    // A write that crosses into the journal: its two halves follow their regions.
    const std::uint64_t straddle = info.journal_runs.front().start * 4096 - 4096;

    const char before_straddle = first_byte(data.get(), straddle);
    REQUIRE(post(control, "/reset-stats").rfind("200", 0) == 0);
    REQUIRE(nbd_pwrite(data.get(), block('J', 4096).data(), 4096, in_journal, 0) == 0);
    REQUIRE(nbd_pwrite(data.get(), block('D', 4096).data(), 4096, outside, 0) == 0);
    REQUIRE(nbd_pwrite(data.get(), block('S', 8192).data(), 8192, straddle, 0) == 0);

    const Json stats = stats_of(control);
    const Json& region = stats.at("exports").at("data").at("regions").at("journal");
    CHECK(starts_with(region.at("model"), "nvram"));
    CHECK(region.at("durability") == "durable on acknowledgement");
    CHECK(region.at("size") == 8 << 20);
    CHECK(region.at("in_flight") == 0);
    CHECK(region.at("ops").at("read").at("count") == 0);
    CHECK(region.at("ops").at("write").at("count") == 2);  // in the journal, and the straddling write's half
    CHECK(region.at("ops").at("write").at("bytes") == 8192);
    CHECK(stats.at("exports").at("data").at("ops").at("write").at("bytes") == 8192);  // the rest
    const Json journal = journal_of(control);
    CHECK(journal.at("placement") == "internal");
    CHECK(journal.at("block_size") == 4096);
    CHECK(journal.at("traffic").at("journal").at("bytes") == 8192);
    const std::string text = nvj::control_request(control, "GET", "/stats?format=text").body;
    CHECK_THAT(text, Catch::Matches(R"((.|\n)*data/journal +write +2 +8192 (.|\n)*)"));
    CHECK_THAT(text, Catch::Matches(R"((.|\n)*\ndata +write +2 +8192 (.|\n)*)"));

    CHECK_THAT(post(control, "/crash?policy=all"), Catch::StartsWith("200 "));
    CHECK_THAT(post(control, "/power-on"), Catch::StartsWith("200 "));
    CHECK(first_byte(data.get(), in_journal) == 'J');                 // NVRAM region: kept
    CHECK(first_byte(data.get(), outside) == 0);                      // data disk cache: lost
    CHECK(first_byte(data.get(), straddle) == before_straddle);       // its data half: lost
    CHECK(first_byte(data.get(), straddle + 4096) == 'S');            // its journal half: kept
  }
  CHECK(server->stop() == 0);
}

TEST_CASE("a file-backed filesystem is served back as it is after a restart", "[fs]") {
  TempDir dir;
  const std::string image = dir.file("data.img");
  fscore::Uuid uuid{};
  std::vector<fscore::ext4::BlockRun> runs;
  {
    auto server = start_server(dir.path / "run1", {"data=128M", "data-file=" + image, "fs-journal=internal",
                                                   "fs-label=lab"});
    auto data = connect(*server, "data");
    const auto info = fscore::ext4::read_image(NbdSource(data.get()));
    CHECK(info.super.volume_name == "lab");
    uuid = info.super.uuid;
    runs = info.journal_runs;
    INFO(info.blocks << " blocks of " << info.block_size);
    const int written = nbd_pwrite(data.get(), block('K', 1024).data(), 1024, (info.blocks - 1) * info.block_size,
                                   LIBNBD_CMD_FLAG_FUA);
    INFO(nbd_get_error());
    REQUIRE(written == 0);
    data.reset();
    CHECK(server->stop() == 0);
  }
  // Restarted without sizes or fs-journal: the file's filesystem, its journal found again.
  const std::string control = dir.file("control.sock");
  auto server = start_server(dir.path / "run2", {"data-file=" + image, "control=" + control});
  {
    auto data = connect(*server, "data");
    const auto info = fscore::ext4::read_image(NbdSource(data.get()));
    CHECK(info.super.uuid == uuid);
    REQUIRE(info.journal_runs.size() == runs.size());
    CHECK(info.journal_runs.front().start == runs.front().start);
    CHECK(first_byte(data.get(), (info.blocks - 1) * info.block_size + 1023) == 'K');
    CHECK(starts_with(stats_of(control).at("exports").at("data").at("regions").at("journal").at("model"), "nvram"));
  }
  CHECK(server->stop() == 0);
}

TEST_CASE("fs-format=force formats a store that holds other data, and fs=none serves it blank", "[fs]") {
  TempDir dir;
  const std::string image = dir.file("junk.img");
  {
    auto server = start_server(dir.path / "run1", {"data=64M", "data-file=" + image, "fs=none", "data-model=none"});
    auto data = connect(*server, "data");
    CHECK_THROWS(fscore::ext4::read_image(NbdSource(data.get())));  // blank
    REQUIRE(nbd_pwrite(data.get(), block('X', 65536).data(), 65536, 0, LIBNBD_CMD_FLAG_FUA) == 0);
    data.reset();
    CHECK(server->stop() == 0);
  }
  auto server = start_server(dir.path / "run2", {"data-file=" + image, "fs-format=force", "fs-journal=internal"});
  {
    auto data = connect(*server, "data");
    const auto info = fscore::ext4::read_image(NbdSource(data.get()));
    CHECK(info.journal == fscore::ext4::JournalKind::kInternal);
    CHECK(first_byte(data.get(), 0) == 0);  // the junk before the superblock is gone too
  }
  CHECK(server->stop() == 0);
}

TEST_CASE("journal-model=data keeps an internal journal on the data disk's own model and cache", "[fs][power]") {
  TempDir dir;
  const std::string control = dir.file("control.sock");
  auto server = start_server(dir.path / "run", {"data=128M", "fs-journal=internal", "journal-model=data",
                                                "data-model=hdd:cache=on", "control=" + control});
  {
    auto data = connect(*server, "data");
    const auto info = fscore::ext4::read_image(NbdSource(data.get()));
    REQUIRE(info.journal == fscore::ext4::JournalKind::kInternal);
    const std::uint64_t in_journal = (info.journal_runs.front().start + 10) * info.block_size;
    REQUIRE(nbd_pwrite(data.get(), block('J', 1024).data(), 1024, in_journal, 0) == 0);
    const Json region = stats_of(control).at("exports").at("data").at("regions").at("journal");
    CHECK(starts_with(region.at("model"), "the data device's own: hdd: 7200 rpm"));
    CHECK(region.at("durability") == "durable after flush or FUA");
    // The same disk's volatile cache: a cut loses the unflushed journal write.
    CHECK_THAT(post(control, "/crash?policy=all"), Catch::StartsWith("200 "));
    CHECK_THAT(post(control, "/power-on"), Catch::StartsWith("200 "));
    CHECK(first_byte(data.get(), in_journal) == 0);

    // A flush destages both; each region is charged for its own blocks.
    // (The idle disk starts on the first write at once; the flush finds the
    // other three, milliseconds of seeking, still cached.)
    REQUIRE(post(control, "/reset-stats").starts_with("200 "));
    for (const std::uint64_t at : {in_journal, std::uint64_t{100} << 20, in_journal + 8 * info.block_size,
                                   std::uint64_t{50} << 20})
      REQUIRE(nbd_pwrite(data.get(), block('W', 4096).data(), 4096, at, 0) == 0);
    REQUIRE(nbd_flush(data.get(), 0) == 0);
    const Json after = stats_of(control).at("exports").at("data");
    const double home = after.at("destaged_writes_us");
    const double journal = after.at("regions").at("journal").at("destaged_writes_us");
    CHECK(home > 0);
    CHECK(journal > 0);
    CHECK(home + journal > after.at("device_time_us").at("destage").get<double>());  // the idle disk's too
  }
  CHECK(server->stop() == 0);
}

TEST_CASE("fs-free=old-data: every free block holds old data, e2fsck passes, and a recording keeps it as ranges",
          "[fs][recording]") {
  TempDir dir;
  const std::string image = dir.file("old.img");
  const std::string recording = dir.file("old.nvjrec");
  fscore::ext4::ImageInfo info;
  {
    auto server = start_server(dir.path / "run", {"data=64M", "data-file=" + image, "fs-journal=internal",
                                                  "fs-free=old-data", "record=" + recording});
    auto data = connect(*server, "data");
    info = fscore::ext4::read_image(NbdSource(data.get()));
    data.reset();
    CHECK(server->stop() == 0);
  }
  // Block by block: old data exactly where the superblock counts free blocks.
  std::ifstream in(image, std::ios::binary);
  std::vector<std::uint8_t> block(info.block_size);
  std::uint64_t old = 0;
  for (std::uint64_t b = 0; b < info.blocks; ++b) {
    in.read(reinterpret_cast<char*>(block.data()), static_cast<std::streamsize>(block.size()));
    REQUIRE(in.good());
    if (fscore::record::is_old_data(block)) ++old;
  }
  INFO(info.blocks << " blocks of " << info.block_size << ", " << info.super.free_blocks << " free");
  CHECK(old == info.super.free_blocks);
  CHECK(old > info.blocks / 2);
  const auto fsck = nvj::cli::run({"e2fsck", "-fn", image});
  INFO(fsck.output);
  CHECK(fsck.status == 0);
  // The recording's base: the free blocks as old-data ranges, not bytes.
  const auto bytes = nvj::test::file_bytes(recording);
  CHECK(bytes.size() < (std::uint64_t{4} << 20));
  fscore::record::FrameReader reader(bytes);
  std::uint64_t ranges = 0;
  while (auto f = reader.next())
    if (f->old_data()) ranges += f->length;
  // Less the free blocks that share a 4 KiB block with others (the recorder's unit).
  CHECK(ranges <= old * info.block_size);
  CHECK(ranges >= old * info.block_size * 9 / 10);
}

TEST_CASE("images made by mke2fs are served as they are with their journal found", "[fs]") {
  // ext3's journal is block-mapped (indirect blocks), ext4's uses extents;
  // both with mke2fs's defaults (resize_inode and all).
  for (const char* type : {"ext3", "ext4"}) {
    INFO(type);
    TempDir dir;
    const std::string image = dir.file("mke2fs.img");
    REQUIRE(nvj::cli::run({"truncate", "-s", "300M", image}).status == 0);
    const auto made = nvj::cli::run({"mke2fs", "-q", "-F", "-t", type, "-J", "size=16", image});
    INFO(made.output);
    REQUIRE(made.status == 0);
    const std::string control = dir.file("control.sock");
    auto server = start_server(dir.path / "run", {"data-file=" + image, "control=" + control, "fs-journal=internal"});
    const Json region = stats_of(control).at("exports").at("data").at("regions").at("journal");
    CHECK(starts_with(region.at("model"), "nvram"));
    CHECK(region.at("size") == 16 << 20);
    const Json journal = journal_of(control);
    CHECK(journal.at("placement") == "internal");
    CHECK(journal.at("format_known") == true);
    CHECK(server->stop() == 0);
    CHECK(nvj::cli::run({"e2fsck", "-fn", image}).status == 0);
  }
}

}  // namespace filesystem_test
