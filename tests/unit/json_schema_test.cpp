// SPDX-License-Identifier: BSD-3-Clause
// The schema check itself (tests/support/validate_json.py against
// docs/schemas): it accepts what the server writes and refuses documents
// that break the published shapes, naming the file, the JSON path and the
// rule. A check that could not fail would prove nothing about the others.
#include <catch2/catch.hpp>

#include <string>

#include "common/json.h"
#include "server/control/control_routes.h"
#include "server/lab/lab.h"
#include "tests/support/json_schema.h"

namespace json_schema_test {

using namespace nvj;
using nvj::test::check_schema;

namespace {

Json real_stats() {
  ConfigParser parser;
  parser.set("data", "16M");
  parser.set("journal", "4M");
  auto lab = Lab::open(parser.finish());
  std::vector<char> block(4096, 'x');
  lab->find("data")->write(block.data(), 4096, 0, false);
  return parse_json(route_control(*lab, "GET", "/stats").body, "GET /stats");
}

// A trace-file line as the server writes it.
Json trace_line() {
  return Json{{"tid", 7},
              {"first_write_us", 10.5},
              {"commit_us", 20.0},
              {"commit_done_us", 22.25},
              {"duration_us", 11.75},
              {"log_start", 1},
              {"log_blocks", 4},
              {"descriptor_blocks", 1},
              {"logged_blocks", 2},
              {"metadata_blocks", 2},
              {"data_blocks", 0},
              {"escaped_blocks", 0},
              {"revoke_blocks", 0},
              {"revoked_blocks", 0},
              {"bytes", 16384},
              {"flushes", 1},
              {"fua_writes", 1},
              {"checksum_errors", 0},
              {"commit_time", "1700000000.000000123"},
              {"fill_after", 0.0125}};
}

std::string refused(const std::string& schema, const Json& doc, const std::string& label) {
  const auto v = check_schema(schema, to_json_text(doc), label);
  INFO(v.report);
  CHECK_FALSE(v.valid);
  return v.report;
}

}  // namespace

TEST_CASE("the schema check accepts the server's documents and refuses broken ones", "[schema]") {
  const Json stats = real_stats();
  {
    const auto v = check_schema("stats", to_json_text(stats), "stats");
    INFO(v.report);
    CHECK(v.valid);
  }
  {
    Json bad = stats;
    bad["exports"]["data"]["ops"]["write"]["count"] = -1;
    const std::string report = refused("stats", bad, "negative-count");
    CHECK_THAT(report, Catch::Contains("nvj-negative-count-"));  // the file
    CHECK_THAT(report, Catch::Contains("at $.exports.data.ops.write.count: -1 is less than the minimum of 0"));
  }
  {
    Json bad = stats;
    bad["exports"]["data"]["ops"]["write"]["bytes"] = "4096";  // a number written as a string
    CHECK_THAT(refused("stats", bad, "string-number"),
               Catch::Contains("at $.exports.data.ops.write.bytes: '4096' is not of type 'integer'"));
  }
  {
    Json bad = stats;
    bad["exports"]["data"].erase("powered");
    CHECK_THAT(refused("stats", bad, "missing"),
               Catch::Contains("at $.exports.data: 'powered' is a required property"));
  }
  {
    Json bad = stats;
    bad["exports"]["data"]["durability"] = "durable eventually";
    CHECK_THAT(refused("stats", bad, "enum"),
               Catch::Contains("at $.exports.data.durability: 'durable eventually' is not one of"));
  }
  {
    Json bad = stats;
    bad["exports"]["scratch"] = stats["exports"]["data"];  // no such export
    CHECK_THAT(refused("stats", bad, "extra-export"), Catch::Contains("'scratch' was unexpected"));
  }
  {
    Json bad = stats;
    bad["exports"]["data"]["queue_depth"]["65"] = 1;  // depths above 63 are "64+"
    CHECK_THAT(refused("stats", bad, "depth"), Catch::Contains("at $.exports.data.queue_depth: '65' does not match"));
  }
}

TEST_CASE("the schema check refuses broken trace lines and journals", "[schema]") {
  {
    const auto v = check_schema("journal-trace-line", to_json_text(trace_line()), "line");
    INFO(v.report);
    CHECK(v.valid);
  }
  Json bad = trace_line();
  bad["commit_time"] = "1700000000.123";  // the nanoseconds are nine digits
  CHECK_THAT(refused("journal-trace-line", bad, "commit-time"),
             Catch::Contains("at $.commit_time: '1700000000.123' does not match"));
  bad = trace_line();
  bad["fill_after"] = 1.5;
  CHECK_THAT(refused("journal-trace-line", bad, "fill"),
             Catch::Contains("at $.fill_after: 1.5 is greater than the maximum of 1"));
  bad = trace_line();
  bad["comment"] = "hello";
  CHECK_THAT(refused("journal-trace-line", bad, "extra"), Catch::Contains("'comment' was unexpected"));

  // A trace file: the bad line is named by its number.
  const std::string file = to_json_text(trace_line()) + "\n" + to_json_text(bad) + "\n";
  const auto v = check_schema("journal-trace-line", file, "trace", true);
  CHECK_FALSE(v.valid);
  CHECK_THAT(v.report, Catch::Matches(R"((.|\n)*nvj-trace-\w+:2: at \$: Additional properties(.|\n)*)"));
  CHECK_THAT(v.report, !Catch::Contains(":1: "));

  // GET /journal: "recent" holds trace lines, checked by their own schema.
  Json journal{{"tracing", false}};
  CHECK(check_schema("journal", to_json_text(journal), "off").valid);
  journal["placement"] = "external";  // tracing off has nothing else
  CHECK_THAT(refused("journal", journal, "off-extra"), Catch::Contains("'placement' was unexpected"));
}

TEST_CASE("the schema check refuses what is not strict JSON", "[schema]") {
  for (const auto& [text, why] : std::vector<std::pair<std::string, std::string>>{
           {R"({"tracing": false)", "not JSON"},
           {R"({"tracing": NaN})", "NaN is not JSON"},
           {R"({"tracing": false, "tracing": false})", "the key 'tracing' is given twice"},
           {"", "not JSON"}}) {
    INFO(text);
    const auto v = check_schema("journal", text, "strict");
    CHECK_FALSE(v.valid);
    CHECK_THAT(v.report, Catch::Contains(why));
  }
}

}  // namespace json_schema_test
