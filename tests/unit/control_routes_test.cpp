// SPDX-License-Identifier: BSD-3-Clause
// The control API's decisions, without sockets: a real Lab (memory stores,
// no timing) and route_control(). JSON answers are parsed and checked
// against the published schemas (docs/schemas).
#include <catch2/catch.hpp>

#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include "common/json.h"
#include "fscore/jbd2/journal_superblock.h"
#include "tests/support/jbd2_log_builder.h"
#include "server/control/control_routes.h"
#include "server/control/stats_report.h"
#include "server/lab/lab.h"
#include "tests/support/json_schema.h"

namespace control_routes_test {

using namespace nvj;
using nvj::test::check_valid;

namespace {

std::unique_ptr<Lab> small_lab() {
  ConfigParser parser;
  parser.set("data", "16M");
  parser.set("journal", "4M");
  parser.set("data-model", "hdd:cache=on");
  parser.set("journal-model", "nvram");
  return Lab::open(parser.finish());
}

// A 200 JSON answer, parsed.
Json json_answer(Lab& lab, std::string_view method, std::string_view target) {
  const ControlReply r = route_control(lab, method, target);
  INFO(std::string(method) << " " << std::string(target) << ": " << r.body);
  REQUIRE(r.status == 200);
  REQUIRE(r.content_type == "application/json");
  return parse_json(r.body, std::string(target));
}

// The error message of a JSON error answer.
std::string error_of(const ControlReply& r) {
  INFO(r.body);
  CHECK(r.content_type == "application/json");
  const Json j = parse_json(r.body, "the error answer");
  CHECK(j.size() == 1);
  return j.at("error").get<std::string>();
}

// Every histogram series in a Prometheus text: the `le` buckets of
// LatencyHistogram::kBounds in order, then +Inf, _sum and _count; the counts
// never decrease and +Inf is the count. `series` of them in all.
void check_histograms(const std::string& text, std::size_t series) {
  const std::vector<std::string> les{"1e-06", "2e-06", "5e-06", "1e-05", "2e-05", "5e-05", "0.0001", "0.0002",
                                     "0.0005", "0.001", "0.002", "0.005", "0.01", "0.02", "0.05", "0.1",
                                     "0.2", "0.5", "1", "2", "5", "10", "+Inf"};
  std::istringstream in(text);
  std::size_t found = 0;
  std::string line;
  while (std::getline(in, line)) {
    if (line.find("_bucket{") == std::string::npos || line.find("le=\"1e-06\"") == std::string::npos) continue;
    ++found;
    INFO(line);
    const std::string name = line.substr(0, line.find("_bucket{"));
    const std::size_t open = line.find('{');
    const std::string labels = line.substr(open + 1, line.find("le=") - open - 1);  // "" or "a=\"x\",...,"
    std::uint64_t previous = 0;
    for (std::size_t i = 0; i < les.size(); ++i) {
      if (i > 0) REQUIRE(std::getline(in, line));
      const std::string head = name + "_bucket{" + labels + "le=\"" + les[i] + "\"} ";
      REQUIRE(line.rfind(head, 0) == 0);
      const std::uint64_t n = std::stoull(line.substr(head.size()));
      CHECK(n >= previous);
      previous = n;
    }
    const std::string braces = labels.empty() ? "" : "{" + labels.substr(0, labels.size() - 1) + "}";
    REQUIRE(std::getline(in, line));
    CHECK(line.rfind(name + "_sum" + braces + " ", 0) == 0);
    REQUIRE(std::getline(in, line));
    CHECK(line == name + "_count" + braces + " " + std::to_string(previous));
  }
  CHECK(found == series);
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
  CHECK(to_json_text(Json("a\"b\\c\n\x01")) == R"("a\"b\\c\n\u0001")");  // what every answer's strings go through
}

TEST_CASE("stats, metrics, marks and resets", "[control]") {
  auto lab = small_lab();
  std::vector<char> block(4096, 'x');
  lab->find("data")->write(block.data(), 4096, 0, false);
  lab->find("journal")->write(block.data(), 4096, 0, false);

  auto r = route_control(*lab, "GET", "/stats");
  CHECK(r.status == 200);
  CHECK(r.content_type == "application/json");
  check_valid("stats", r.body);
  Json stats = parse_json(r.body, "GET /stats");
  CHECK(stats.at("exports").size() == 2);
  const Json& data = stats.at("exports").at("data");
  CHECK(data.at("description").get<std::string>().rfind("data: 16 MiB", 0) == 0);
  CHECK(data.at("powered") == true);
  CHECK(data.at("size") == 16 << 20);
  CHECK(data.at("durability") == "durable after flush or FUA");
  CHECK(data.at("ops").at("write").at("count") == 1);
  CHECK(data.at("ops").at("write").at("bytes") == 4096);
  CHECK(data.at("ops").at("write").at("errors") == 0);
  CHECK(data.at("ops").at("read").at("count") == 0);
  CHECK(data.at("ops").at("write").at("latency_us").at("max").is_number());
  CHECK(data.at("regions").empty());
  const Json& journal = stats.at("exports").at("journal");
  CHECK(journal.at("durability") == "durable on acknowledgement");
  CHECK(journal.at("ops").at("write").at("count") == 1);
  CHECK(journal.at("queue_depth") == Json{{"0", 1}});  // one request, nothing ahead of it
  // Both writes were timed by a model: each reply's lateness is counted,
  // and the clock waited for at most those two.
  CHECK(data.at("late_us").at("count") == 1);
  CHECK(journal.at("late_us").at("count") == 1);
  const Json& clock = stats.at("clock");
  CHECK(clock.at("waits").get<int>() + clock.at("behind").get<int>() == 2);  // each waited, or was past its time
  CHECK(clock.at("slept").get<int>() <= clock.at("waits").get<int>());
  CHECK(clock.at("woke_late").get<int>() <= clock.at("slept").get<int>());
  CHECK(clock.at("spin_window_us").size() == 4);
  CHECK(stats.at("marks").empty());
  CHECK(stats.at("uptime_s").get<double>() >= 0);

  r = route_control(*lab, "GET", "/stats?format=text");
  CHECK(r.status == 200);
  CHECK_THAT(r.body, Catch::Contains("data         write"));
  CHECK_THAT(r.body, Catch::Contains("  1 replies after the model's time: p50 "));
  CHECK(route_control(*lab, "GET", "/stats?format=xml").status == 400);

  r = route_control(*lab, "GET", "/metrics");
  CHECK(r.status == 200);
  CHECK_THAT(r.body, Catch::Contains("# TYPE nvjournal_requests_total counter"));
  CHECK_THAT(r.body, Catch::Contains("nvjournal_requests_total{export=\"journal\",op=\"write\"} 1\n"));
  CHECK_THAT(r.body, Catch::Contains("nvjournal_latency_seconds_count{export=\"data\",op=\"write\"} 1\n"));
  CHECK_THAT(r.body, Catch::Contains("# TYPE nvjournal_latency_seconds histogram\n"));
  CHECK_THAT(r.body,
             Catch::Contains("nvjournal_latency_seconds_bucket{export=\"data\",op=\"write\",le=\"+Inf\"} 1\n"));
  CHECK_THAT(r.body,
             Catch::Contains("nvjournal_latency_seconds_bucket{export=\"data\",op=\"read\",le=\"1e-06\"} 0\n"));
  CHECK_THAT(r.body,
             Catch::Contains("nvjournal_latency_seconds_bucket{export=\"journal\",op=\"flush\",le=\"0.0005\"} 0\n"));
  CHECK_THAT(r.body, !Catch::Contains("quantile="));
  CHECK_THAT(r.body, Catch::Contains("nvjournal_late_seconds_count{export=\"journal\"} 1\n"));
  CHECK_THAT(r.body, Catch::Contains("# TYPE nvjournal_clock_spin_seconds_total counter\n"));
  CHECK_THAT(r.body, Catch::Contains("nvjournal_clock_waits_total{how=\"woke_late\"} "));
  // Two exports: five operations each and their lateness; the journal's commits.
  check_histograms(r.body, 2 * 5 + 2 + 1);

  CHECK(json_answer(*lab, "POST", "/mark?label=phase%201") == Json{{"marked", "phase 1"}});
  CHECK(error_of(route_control(*lab, "POST", "/mark")) == "POST /mark needs label=TEXT");
  CHECK(route_control(*lab, "POST", "/mark?label=" + std::string(2000, 'x')).status == 400);
  stats = json_answer(*lab, "GET", "/stats");
  REQUIRE(stats.at("marks").size() == 1);
  CHECK(stats.at("marks")[0].at("label") == "phase 1");
  CHECK(stats.at("marks")[0].at("t_s").get<double>() >= 0);

  CHECK(json_answer(*lab, "POST", "/reset-stats") == Json{{"reset", true}});
  r = route_control(*lab, "GET", "/stats");
  check_valid("stats", r.body);
  stats = parse_json(r.body, "GET /stats");
  CHECK(stats.at("exports").at("data").at("ops").at("write").at("count") == 0);
  CHECK(stats.at("exports").at("data").at("queue_depth").empty());
  CHECK(stats.at("exports").at("data").at("late_us").at("count") == 0);
  CHECK(stats.at("clock").at("waits") == 0);
  CHECK(stats.at("marks").empty());
}

TEST_CASE("labels come back as they were sent, whatever their bytes", "[control]") {
  auto lab = small_lab();
  // A quote, a backslash, a newline, a control character, and a byte that is not UTF-8.
  CHECK(json_answer(*lab, "POST", "/mark?label=a%22b%5Cc%0Ad%01") == Json{{"marked", "a\"b\\c\nd\x01"}});
  CHECK(json_answer(*lab, "POST", "/mark?label=caf%C3%A9%FF").at("marked") == "caf\u00e9\ufffd");
  const auto r = route_control(*lab, "GET", "/stats");
  check_valid("stats", r.body);
  const Json marks = parse_json(r.body, "GET /stats").at("marks");
  REQUIRE(marks.size() == 2);
  CHECK(marks[0].at("label") == "a\"b\\c\nd\x01");
  CHECK(marks[1].at("label") == "caf\u00e9\ufffd");
}

TEST_CASE("model changes: good ones apply, bad ones change nothing", "[control]") {
  auto lab = small_lab();
  const Json changed = json_answer(*lab, "POST", "/model?export=data&model=hdd:rpm=5400");
  CHECK(changed.at("export") == "data");
  CHECK(changed.at("model") == lab->find("data")->model_description());
  CHECK(lab->find("data")->model_description().rfind("hdd: 5400 rpm", 0) == 0);
  const std::string before = lab->find("data")->model_description();
  for (const char* bad : {"/model?export=data&model=tape", "/model?export=data&model=hdd:rpmx=1",
                          "/model?export=data&model=hdd:cache=off", "/model?export=nosuch&model=hdd",
                          "/model?export=data", "/model?model=hdd", "/model?export=&model=hdd"}) {
    INFO(bad);
    const auto r = route_control(*lab, "POST", bad);
    CHECK(r.status == 400);
    CHECK_FALSE(error_of(r).empty());
    CHECK(lab->find("data")->model_description() == before);
  }
  CHECK(route_control(*lab, "POST", "/model?export=journal&model=nvram:latency=10us").status == 200);
  CHECK(route_control(*lab, "POST", "/model?export=journal&model=none").status == 200);
  CHECK(lab->find("journal")->model_description() == "none");
}

TEST_CASE("unknown paths and wrong methods", "[control]") {
  auto lab = small_lab();
  const auto r = route_control(*lab, "GET", "/nothing");
  CHECK(r.status == 404);
  CHECK_THAT(error_of(r), Catch::StartsWith("no such path: /nothing (GET /stats, GET /metrics, GET /journal, "));
  CHECK(error_of(route_control(*lab, "POST", "/stats")) == "/stats takes GET, not POST");
  CHECK(route_control(*lab, "POST", "/stats").status == 405);
  CHECK(route_control(*lab, "GET", "/reset-stats").status == 405);
  CHECK(route_control(*lab, "DELETE", "/model").status == 405);
  CHECK(route_control(*lab, "GET", "/stats?%").status == 400);
}

TEST_CASE("the metrics listener's routes: GET /metrics and nothing else, never acted on", "[control]") {
  auto lab = small_lab();
  std::vector<char> block(4096, 'w');
  lab->find("data")->write(block.data(), 4096, 0, false);
  ControlReply r = route_metrics(*lab, "GET", "/metrics");
  CHECK(r.status == 200);
  CHECK(r.content_type == "text/plain; version=0.0.4; charset=utf-8");
  CHECK_THAT(r.body, Catch::Contains("nvjournal_requests_total{export=\"data\",op=\"write\"} 1\n"));
  CHECK(route_metrics(*lab, "GET", "/metrics?anything=1").status == 200);
  // Every control route, with its own method: not found here, and nothing done.
  for (const char* target :
       {"/crash", "/power-on", "/reset-stats", "/mark?label=x", "/model?export=data&model=ssd"}) {
    r = route_metrics(*lab, "POST", target);
    CHECK(r.status == 404);
    CHECK_THAT(error_of(r), Catch::EndsWith("(this listener serves GET /metrics only)"));
  }
  for (const char* target : {"/stats", "/journal", "/", "/metricsx", "/metrics/"})
    CHECK(route_metrics(*lab, "GET", target).status == 404);
  for (const char* method : {"POST", "PUT", "DELETE", "HEAD"}) {
    r = route_metrics(*lab, method, "/metrics");
    CHECK(r.status == 405);
    CHECK(error_of(r) == "/metrics takes GET, not " + std::string(method));
  }
  const Json stats = json_answer(*lab, "GET", "/stats");
  for (const auto& [name, e] : stats.at("exports").items()) {
    CAPTURE(name);
    CHECK(e.at("powered") == true);
  }
  CHECK(stats.at("exports").at("data").at("ops").at("write").at("count") == 1);  // not reset
  CHECK(stats.at("marks").empty());
  CHECK(lab->find("data")->model_description().rfind("hdd", 0) == 0);
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
  check_valid("journal", r.body);
  const Json j = parse_json(r.body, "GET /journal");
  CHECK(j.at("tracing") == true);
  CHECK(j.at("placement") == "external");
  CHECK(j.at("format_known") == true);
  CHECK(j.at("block_size") == 1024);
  CHECK(j.at("log_blocks") == sb.maxlen - sb.first);
  CHECK(j.at("committed_transactions") == 1);
  CHECK(j.at("logged_blocks") == 2);
  CHECK(j.at("revoked_blocks") == 1);
  CHECK(j.at("revoke_blocks") == 1);
  CHECK(j.at("descriptor_blocks") == 1);
  CHECK(j.at("log_blocks_written") == 5);  // revoke, descriptor, two logged, commit
  CHECK(j.at("problems") == 0);
  CHECK(j.at("recent_problems").empty());
  CHECK(j.at("traffic").at("checkpoint").at("bytes") == 1024);
  CHECK(j.at("traffic").at("checkpoint").at("writes") == 1);
  CHECK(j.at("traffic").at("ordered").at("bytes") == 0);
  CHECK(j.at("commit_latency_us").at("count") == 1);
  CHECK(j.at("fill_ratio").get<double>() >= 0);
  REQUIRE(j.at("recent").size() == 1);
  const Json& tx = j.at("recent")[0];
  CHECK(tx.at("tid") == sb.sequence);
  CHECK(tx.at("log_start") == sb.first);
  CHECK(tx.at("log_blocks") == 5);
  CHECK(tx.at("bytes") == 5 * 1024);
  CHECK(tx.at("logged_blocks") == 2);
  CHECK(tx.at("revoked_blocks") == 1);
  CHECK(tx.at("commit_time") == "1.000000002");
  CHECK(tx.at("fill_after").get<double>() > 0);
  CHECK(tx.at("fill_after") == j.at("fill_ratio"));  // nothing committed since
  r = route_control(*lab, "GET", "/journal?format=text");
  CHECK(r.status == 200);
  CHECK_THAT(r.body, Catch::Contains("1 transactions, 2 blocks logged"));
  CHECK(route_control(*lab, "GET", "/journal?format=xml").status == 400);
  CHECK(route_control(*lab, "POST", "/journal").status == 405);
  const std::string metrics = route_control(*lab, "GET", "/metrics").body;
  CHECK_THAT(metrics, Catch::Contains("nvjournal_journal_transactions_total 1\n"));
  CHECK_THAT(metrics, Catch::Contains("# TYPE nvjournal_journal_commit_seconds histogram\n"));
  CHECK_THAT(metrics, Catch::Contains("nvjournal_journal_commit_seconds_bucket{le=\"+Inf\"} 1\n"));
  CHECK_THAT(metrics, Catch::Contains("nvjournal_journal_commit_seconds_count 1\n"));
  check_histograms(metrics, 2 * 5 + 2 + 1);  // two exports: operations and lateness; the commits
  CHECK(route_control(*lab, "POST", "/reset-stats").status == 200);
  r = route_control(*lab, "GET", "/journal");
  check_valid("journal", r.body);
  const Json after = parse_json(r.body, "GET /journal");
  CHECK(after.at("committed_transactions") == 0);
  CHECK(after.at("recent").empty());
  CHECK(after.at("synchronized") == true);  // the decoder keeps following the log
}

TEST_CASE("GET /journal without a tracer says so", "[control][jbd2]") {
  ConfigParser parser;
  parser.set("data", "16M");
  parser.set("journal", "4M");
  parser.set("journal-trace", "off");
  auto lab = Lab::open(parser.finish());
  const auto r = route_control(*lab, "GET", "/journal");
  CHECK(r.status == 200);
  check_valid("journal", r.body);
  CHECK(parse_json(r.body, "GET /journal") == Json{{"tracing", false}});
}

}  // namespace control_routes_test
