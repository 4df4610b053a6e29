// The control API's decisions, without sockets: a real Lab (memory stores,
// no timing) and route_control().
#include <catch2/catch.hpp>

#include <string>

#include "fscore/jbd2/journal_superblock.h"
#include "fscore/jbd2/log_builder.h"
#include "server/control/control_routes.h"
#include "server/control/stats_report.h"
#include "server/lab/lab.h"

using namespace nvj;

namespace {

std::unique_ptr<Lab> small_lab() {
  ConfigParser parser;
  parser.set("data", "16M");
  parser.set("journal", "4M");
  parser.set("data-model", "hdd:cache=on");
  parser.set("journal-model", "nvram");
  return Lab::open(parser.finish());
}

}  // namespace

TEST_CASE("queries decode and bad ones are refused", "[control]") {
  const auto q = parse_query("export=data&model=hdd%3Arpm%3D5400%2Ccache%3Doff&label=a+b&flag");
  CHECK(q.at("export") == "data");
  CHECK(q.at("model") == "hdd:rpm=5400,cache=off");
  CHECK(q.at("label") == "a b");
  CHECK(q.at("flag").empty());
  CHECK_THROWS_WITH(parse_query("a=%4"), "bad %-escape in the query");
  CHECK_THROWS_WITH(parse_query("a=%zz"), "bad %-escape in the query");
  CHECK_THROWS_WITH(parse_query("a=1&a=2"), "a query parameter is given twice");
  CHECK(json_quote("a\"b\\c\n\x01") == R"("a\"b\\c\n\u0001")");
}

TEST_CASE("stats, metrics, marks and resets", "[control]") {
  auto lab = small_lab();
  std::vector<char> block(4096, 'x');
  lab->find("data")->write(block.data(), 4096, 0, false);
  lab->find("journal")->write(block.data(), 4096, 0, false);

  auto r = route_control(*lab, "GET", "/stats");
  CHECK(r.status == 200);
  CHECK(r.content_type == "application/json");
  CHECK_THAT(r.body, Catch::Contains(R"("data":{"description":)"));
  CHECK_THAT(r.body, Catch::Contains(R"("write":{"count":1,"bytes":4096,"errors":0)"));
  CHECK_THAT(r.body, Catch::Contains(R"("durability":"durable on acknowledgement")"));

  r = route_control(*lab, "GET", "/stats?format=text");
  CHECK(r.status == 200);
  CHECK_THAT(r.body, Catch::Contains("data         write"));
  CHECK(route_control(*lab, "GET", "/stats?format=xml").status == 400);

  r = route_control(*lab, "GET", "/metrics");
  CHECK(r.status == 200);
  CHECK_THAT(r.body, Catch::Contains("# TYPE nvjournal_requests_total counter"));
  CHECK_THAT(r.body, Catch::Contains("nvjournal_requests_total{export=\"journal\",op=\"write\"} 1\n"));
  CHECK_THAT(r.body, Catch::Contains("nvjournal_latency_seconds_count{export=\"data\",op=\"write\"} 1\n"));

  CHECK(route_control(*lab, "POST", "/mark?label=phase%201").status == 200);
  CHECK(route_control(*lab, "POST", "/mark").status == 400);
  CHECK(route_control(*lab, "POST", "/mark?label=" + std::string(2000, 'x')).status == 400);
  CHECK_THAT(route_control(*lab, "GET", "/stats").body, Catch::Contains(R"("label":"phase 1")"));

  CHECK(route_control(*lab, "POST", "/reset-stats").status == 200);
  CHECK_THAT(route_control(*lab, "GET", "/stats").body, Catch::Contains(R"("write":{"count":0,)"));
  CHECK_THAT(route_control(*lab, "GET", "/stats").body, Catch::Contains(R"("marks":[])"));
}

TEST_CASE("model changes: good ones apply, bad ones change nothing", "[control]") {
  auto lab = small_lab();
  auto r = route_control(*lab, "POST", "/model?export=data&model=hdd:rpm=5400");
  CHECK(r.status == 200);
  CHECK(lab->find("data")->model_description().rfind("hdd: 5400 rpm", 0) == 0);
  const std::string before = lab->find("data")->model_description();
  for (const char* bad : {"/model?export=data&model=tape", "/model?export=data&model=hdd:rpmx=1",
                          "/model?export=data&model=hdd:cache=off", "/model?export=nosuch&model=hdd",
                          "/model?export=data", "/model?model=hdd", "/model?export=&model=hdd"}) {
    INFO(bad);
    r = route_control(*lab, "POST", bad);
    CHECK(r.status == 400);
    CHECK_THAT(r.body, Catch::StartsWith("{\"error\":"));
    CHECK(lab->find("data")->model_description() == before);
  }
  CHECK(route_control(*lab, "POST", "/model?export=journal&model=nvram:latency=10us").status == 200);
  CHECK(route_control(*lab, "POST", "/model?export=journal&model=none").status == 200);
  CHECK(lab->find("journal")->model_description() == "none");
}

TEST_CASE("unknown paths and wrong methods", "[control]") {
  auto lab = small_lab();
  CHECK(route_control(*lab, "GET", "/nothing").status == 404);
  CHECK(route_control(*lab, "POST", "/stats").status == 405);
  CHECK(route_control(*lab, "GET", "/reset-stats").status == 405);
  CHECK(route_control(*lab, "DELETE", "/model").status == 405);
  CHECK(route_control(*lab, "GET", "/stats?%").status == 400);
}

TEST_CASE("GET /journal: transactions written to the journal export are decoded", "[control][jbd2]") {
  auto lab = small_lab();  // 16M data: 1 KiB blocks, the journal superblock at block 2 of the journal export
  Device& journal = *lab->find("journal");
  std::vector<std::uint8_t> raw(fscore::jbd2::kSuperblockSize);
  journal.read(raw.data(), static_cast<std::uint32_t>(raw.size()), 2048);
  auto sb = fscore::jbd2::decode_journal_superblock(
      std::span<const std::uint8_t, fscore::jbd2::kSuperblockSize>(raw.data(), raw.size()));
  REQUIRE(sb.block_size == 1024);
  // A mount's first commit: the superblock with the log's start, then the log.
  sb.start = sb.first;
  std::vector<std::uint8_t> block(1024);
  fscore::jbd2::encode_journal_superblock(sb, std::span<std::uint8_t, fscore::jbd2::kSuperblockSize>(block.data(), 1024));
  journal.write(block.data(), 1024, 2048, true);
  fscore::jbd2::LogBuilder log(sb, sb.first, sb.sequence);
  std::vector<std::uint8_t> content(1024, 0x5A);
  log.log(300, content);
  log.log(301, content);
  log.revoke(999);
  log.commit(1, 2);
  for (const auto& w : log.blocks())
    journal.write(w.bytes.data(), 1024, std::uint64_t{w.log_block} * 1024, false);
  // A write home of a logged block is a checkpoint.
  lab->find("data")->write(content.data(), 1024, 300 * 1024, false);

  auto r = route_control(*lab, "GET", "/journal");
  REQUIRE(r.status == 200);
  CHECK_THAT(r.body, Catch::Contains(R"("tracing":true,"placement":"external")"));
  CHECK_THAT(r.body, Catch::Contains(R"("committed_transactions":1,"logged_blocks":2,)"));
  CHECK_THAT(r.body, Catch::Contains(R"("revoked_blocks":1,)"));
  CHECK_THAT(r.body, Catch::Contains(R"("checkpoint":{"bytes":1024,"writes":1,)"));
  CHECK_THAT(r.body, Catch::Contains(R"("commit_latency_us":{"count":1,)"));
  CHECK_THAT(r.body, Catch::Contains(R"("fill_ratio":)"));
  CHECK_THAT(r.body, Catch::Contains(R"("recent":[{"tid":)" + std::to_string(sb.sequence)));
  r = route_control(*lab, "GET", "/journal?format=text");
  CHECK(r.status == 200);
  CHECK_THAT(r.body, Catch::Contains("1 transactions, 2 blocks logged"));
  CHECK(route_control(*lab, "GET", "/journal?format=xml").status == 400);
  CHECK(route_control(*lab, "POST", "/journal").status == 405);
  CHECK_THAT(route_control(*lab, "GET", "/metrics").body,
             Catch::Contains("nvjournal_journal_transactions_total 1\n"));
  CHECK(route_control(*lab, "POST", "/reset-stats").status == 200);
  CHECK_THAT(route_control(*lab, "GET", "/journal").body, Catch::Contains(R"("committed_transactions":0,)"));
}
