// SPDX-License-Identifier: BSD-3-Clause
// The live journal through the real nbdkit: jbd2 transactions written to the
// journal export through libnbd (laid out by fscore's LogBuilder as the
// kernel's commit does) are decoded by the server. GET /journal and the
// trace-file= lines report them, both valid against the published schemas
// and the same transaction for transaction. XFS log records likewise.
#include <catch2/catch.hpp>

#include <cstdint>
#include <span>
#include <sstream>
#include <string>
#include <vector>

#include "fscore/endian.h"
#include "fscore/jbd2/journal_superblock.h"
#include "server_fixture.h"
#include "tests/support/jbd2_log_builder.h"
#include "tests/support/json_schema.h"
#include "tests/support/xfs_record_builder.h"
#include "tools/nvj/host/files/text_file.h"

namespace journal_trace_test {

using nvj::Json;
using nvj::parse_json;
using nvj::test::check_valid;
using nvj::test::connect;
using nvj::test::control_json;
using nvj::test::start_server;
using nvj::test::TempDir;
namespace jbd2 = fscore::jbd2;

namespace {

constexpr std::uint32_t kBlock = 4096;

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

}  // namespace

TEST_CASE("GET /journal and trace-file= report the transactions written through NBD", "[journal][schema]") {
  TempDir dir;
  const std::string control = dir.file("control.sock");
  const std::string trace = dir.file("journal.trace");
  auto server = start_server(dir.path / "run", {"data=64M", "journal=8M", "fs-block-size=4096", "control=" + control,
                                                "trace-file=" + trace, "data-model=none", "journal-model=none",
                                                "journal-write-cache=write-back"});  // FUA and flushes to count
  std::uint32_t first_tid = 0;
  {
    auto journal = connect(*server, "journal");
    auto data = connect(*server, "data");
    // The journal device's superblock: block 1024 / 4096 + 1.
    std::vector<std::uint8_t> block(kBlock);
    REQUIRE(nbd_pread(journal.get(), block.data(), kBlock, kBlock, 0) == 0);
    auto sb = jbd2::decode_journal_superblock(
        std::span<const std::uint8_t, jbd2::kSuperblockSize>(block.data(), jbd2::kSuperblockSize));
    REQUIRE(sb.block_size == kBlock);
    first_tid = sb.sequence;
    // A mount's first commit: the superblock with the log's start, then the log.
    sb.start = sb.first;
    jbd2::encode_journal_superblock(
        sb, std::span<std::uint8_t, jbd2::kSuperblockSize>(block.data(), jbd2::kSuperblockSize));
    REQUIRE(nbd_pwrite(journal.get(), block.data(), kBlock, kBlock, LIBNBD_CMD_FLAG_FUA) == 0);

    jbd2::LogBuilder log(sb, sb.first, sb.sequence);
    std::vector<std::uint8_t> content(kBlock, 0x5A);
    std::vector<std::uint8_t> magic_first = content;  // logged escaped
    fscore::store_be<std::uint32_t>(magic_first.data(), jbd2::kMagic);
    log.log(300, content);
    log.log(301, content);
    log.commit(1700000000, 123);
    log.revoke(999);
    log.log(302, magic_first);
    log.commit(1700000001, 5);
    log.log(303, content);
    log.commit(1700000002, 999999999);
    for (const auto& w : log.blocks())
      REQUIRE(nbd_pwrite(journal.get(), w.bytes.data(), kBlock, std::uint64_t{w.log_block} * kBlock, 0) == 0);
    REQUIRE(nbd_flush(journal.get(), 0) == 0);
    // A logged block written home: a checkpoint.
    REQUIRE(nbd_pwrite(data.get(), content.data(), kBlock, 300 * kBlock, 0) == 0);
  }

  const std::string body = nvj::control_call(control, "GET", "/journal");
  check_valid("journal", body);
  const Json j = parse_json(body, "GET /journal");
  CHECK(j.at("placement") == "external");
  CHECK(j.at("block_size") == kBlock);
  CHECK(j.at("synchronized") == true);
  CHECK(j.at("committed_transactions") == 3);
  CHECK(j.at("logged_blocks") == 4);
  CHECK(j.at("escaped_blocks") == 1);
  CHECK(j.at("revoked_blocks") == 1);
  CHECK(j.at("checksum_errors") == 0);
  CHECK(j.at("problems") == 0);
  CHECK(j.at("commit_latency_us").at("count") == 3);
  CHECK(j.at("traffic").at("checkpoint").at("bytes") == kBlock);
  const Json& recent = j.at("recent");
  REQUIRE(recent.size() == 3);
  for (std::uint32_t i = 0; i < 3; ++i) CHECK(recent[i].at("tid") == first_tid + i);
  CHECK(recent[0].at("logged_blocks") == 2);
  CHECK(recent[1].at("revoked_blocks") == 1);
  CHECK(recent[1].at("escaped_blocks") == 1);
  CHECK(recent[0].at("commit_time") == "1700000000.000000123");
  CHECK(recent[2].at("commit_time") == "1700000002.999999999");
  CHECK(recent[0].at("log_start") < recent[1].at("log_start"));
  // Each transaction's fill is the log's when it committed: it grows.
  CHECK(recent[0].at("fill_after") < recent[1].at("fill_after"));
  CHECK(recent[1].at("fill_after") < recent[2].at("fill_after"));
  CHECK(recent[2].at("fill_after") == j.at("fill_ratio"));

  // Reading GET /journal decoded everything served: the trace file holds every line.
  const std::string lines = nvj::cli::read_text_file(trace);
  check_valid("journal-trace-line", lines, true);
  const auto each = lines_of(lines);
  REQUIRE(each.size() == 3);
  for (std::size_t i = 0; i < each.size(); ++i) {
    INFO("trace line " << i + 1);
    CHECK(parse_json(each[i], "a trace line") == recent[i]);
  }

  CHECK(control_json(control, "POST", "/reset-stats") == Json{{"reset", true}});
  const std::string reset = nvj::control_call(control, "GET", "/journal");
  check_valid("journal", reset);
  CHECK(parse_json(reset, "GET /journal").at("recent").empty());
  CHECK(server->stop() == 0);
}

// XFS log records (fscore's record builder lays them out as the kernel's
// xlog_sync does) written through NBD: on the journal export they are
// recognised as an XFS log, and followed across the log's end; in the data
// export, once an XFS superblock there says where its internal log is.
TEST_CASE("GET /journal follows an XFS log written through NBD", "[journal][schema][xfs]") {
  namespace xfs = fscore::xfs;
  TempDir dir;
  const std::string control = dir.file("control.sock");
  auto server = start_server(dir.path / "run", {"fs=none", "data=64M", "journal=1M", "control=" + control,
                                                "data-model=none", "journal-model=none",
                                                "journal-write-cache=write-back"});  // its writes carry FUA
  constexpr std::uint64_t kLogBlocks = (1u << 20) / xfs::kBasicBlock;  // the whole journal export
  std::vector<std::uint8_t> payload(20000);
  for (std::size_t i = 0; i < payload.size(); ++i) payload[i] = static_cast<std::uint8_t>(i * 13);
  {
    auto journal = connect(*server, "journal");
    auto put = [&](const std::vector<std::uint8_t>& r, std::uint64_t block, std::uint32_t flags) {
      const std::uint64_t end = std::min<std::uint64_t>(r.size(), (kLogBlocks - block) * xfs::kBasicBlock);
      REQUIRE(nbd_pwrite(journal.get(), r.data(), end, block * xfs::kBasicBlock, flags) == 0);
      if (end < r.size()) REQUIRE(nbd_pwrite(journal.get(), r.data() + end, r.size() - end, 0, flags) == 0);
    };
    const auto a = xfs::build_record({.cycle = 1, .block = 0, .tail = {1, 0}, .operations = 4}, payload);
    put(a, 0, LIBNBD_CMD_FLAG_FUA);
    const std::uint32_t b_block = static_cast<std::uint32_t>(a.size() / xfs::kBasicBlock);
    const auto b = xfs::build_record({.cycle = 1, .block = b_block, .tail = {1, 0}, .operations = 7}, payload);
    put(b, b_block, 0);
    REQUIRE(nbd_flush(journal.get(), 0) == 0);
    // One that wraps past the end of the log: its rest at block 0, stamped with cycle 2.
    const std::uint32_t c_block = static_cast<std::uint32_t>(kLogBlocks - 10);
    const auto c = xfs::build_record({.cycle = 1, .block = c_block, .tail = {1, b_block}, .operations = 2}, payload,
                                     kLogBlocks);
    put(c, c_block, LIBNBD_CMD_FLAG_FUA);
  }
  std::string body = nvj::control_call(control, "GET", "/journal");
  check_valid("journal", body);
  Json j = parse_json(body, "GET /journal");
  CHECK(j.at("format") == "xfs");
  CHECK(j.at("placement") == "external");
  CHECK(j.at("log_blocks") == kLogBlocks);
  CHECK(j.at("records") == 3);
  CHECK(j.at("operations") == 13);
  CHECK(j.at("checksum_errors") == 0);
  CHECK(j.at("problems") == 0);
  CHECK(j.at("log_write_latency_us").at("count") == 3);
  const std::uint64_t record_blocks = 1 + (payload.size() + 511) / 512;  // header and data
  CHECK(j.at("head_lsn") == "2:" + std::to_string(record_blocks - 10));
  CHECK(j.at("tail_lsn") == "1:" + std::to_string(1 + (payload.size() + 511) / 512));
  REQUIRE(j.at("recent").size() == 3);
  CHECK(j.at("recent")[1].at("fua") == false);
  CHECK(j.at("recent")[2].at("writes") == 2);
  CHECK(j.at("recent")[2].at("crc") == "ok");

  // The internal log of an XFS in the data export: a superblock that puts a
  // 4 MiB log at filesystem block 1024 (4 KiB blocks, one allocation group).
  {
    auto data = connect(*server, "data");
    std::vector<std::uint8_t> sb(xfs::kBasicBlock, 0);
    fscore::store_be<std::uint32_t>(sb.data(), 0x58465342);  // "XFSB"
    fscore::store_be<std::uint32_t>(sb.data() + 4, 4096);
    fscore::store_be<std::uint64_t>(sb.data() + 48, 1024);
    fscore::store_be<std::uint32_t>(sb.data() + 84, 16384);
    fscore::store_be<std::uint32_t>(sb.data() + 96, 1024);
    sb[124] = 14;
    REQUIRE(nbd_pwrite(data.get(), sb.data(), sb.size(), 0, 0) == 0);
    auto r = xfs::build_record({.cycle = 1, .block = 0, .tail = {1, 0}, .operations = 3}, payload);
    REQUIRE(nbd_pwrite(data.get(), r.data(), r.size(), 1024 * 4096, 0) == 0);
    REQUIRE(nbd_flush(data.get(), 0) == 0);
    const std::uint64_t next = r.size() / xfs::kBasicBlock;
    r = xfs::build_record({.cycle = 1, .block = static_cast<std::uint32_t>(next), .tail = {1, 0}}, payload);
    r[xfs::kBasicBlock + 9] ^= 0x5A;  // damaged
    REQUIRE(nbd_pwrite(data.get(), r.data(), r.size(), 1024 * 4096 + next * xfs::kBasicBlock, 0) == 0);
  }
  body = nvj::control_call(control, "GET", "/journal");
  check_valid("journal", body);
  j = parse_json(body, "GET /journal");
  CHECK(j.at("placement") == "internal");
  CHECK(j.at("log_blocks") == 1024 * 4096 / 512);
  CHECK(j.at("records") == 2);
  CHECK(j.at("checksum_errors") == 1);
  CHECK(j.at("head_lsn") == "1:" + std::to_string(1 + (payload.size() + 511) / 512));
  CHECK(j.at("log_write_latency_us").at("count") == 1);
  REQUIRE(j.at("recent_problems").size() == 1);
  CHECK(j.at("recent_problems")[0] == "the record at 1:" + std::to_string(1 + (payload.size() + 511) / 512) +
                                          " does not match its CRC");
  CHECK(j.at("traffic").at("journal").at("writes") == 2);
  const std::string text = nvj::control_call(control, "GET", "/journal?format=text");
  CHECK_THAT(text, Catch::StartsWith("xfs log (internal, following the log): 2 records, 4 operations"));

  // Another filesystem made over it: byte 0 without XFS's magic.
  {
    auto data = connect(*server, "data");
    std::vector<std::uint8_t> zeros(4096, 0);
    REQUIRE(nbd_pwrite(data.get(), zeros.data(), zeros.size(), 0, 0) == 0);
  }
  body = nvj::control_call(control, "GET", "/journal");
  check_valid("journal", body);
  j = parse_json(body, "GET /journal");
  CHECK(j.at("format") == "unknown");
  CHECK_THAT(j.at("recent_problems").back().get<std::string>(), Catch::Contains("no longer holds an XFS"));
  CHECK(server->stop() == 0);
}

}  // namespace journal_trace_test
