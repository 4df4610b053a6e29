// The live journal through the real nbdkit: jbd2 transactions written to the
// journal export through libnbd (laid out by fscore's LogBuilder as the
// kernel's commit does) are decoded by the server. GET /journal and the
// trace-file= lines report them, both valid against the published schemas
// and the same transaction for transaction.
#include <catch2/catch.hpp>

#include <cstdint>
#include <span>
#include <sstream>
#include <string>
#include <vector>

#include "fscore/endian.h"
#include "fscore/jbd2/journal_superblock.h"
#include "fscore/jbd2/log_builder.h"
#include "server_fixture.h"
#include "tests/support/json_schema.h"
#include "tools/nvj/host/text_file.h"

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
                                                "trace-file=" + trace, "data-model=none", "journal-model=none"});
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

  const std::string body = nvj::cli::control_call(control, "GET", "/journal");
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
  const std::string reset = nvj::cli::control_call(control, "GET", "/journal");
  check_valid("journal", reset);
  CHECK(parse_json(reset, "GET /journal").at("recent").empty());
  CHECK(server->stop() == 0);
}
