// SPDX-License-Identifier: BSD-3-Clause
// What the experiments read from the server's answers (JsonFigures: numbers
// by dotted path) and write as results.json.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "common/json.h"
#include "tools/nvj/experiment/report.h"

namespace experiment_report_test {

namespace fs = std::filesystem;
using nvj::cli::JsonFigures;

TEST_CASE("JsonFigures reads numbers by dotted path and names what is missing", "[report]") {
  const JsonFigures j(R"({"committed_transactions":42,"commit_latency_us":{"p50":8519.7,"p99":35127},)"
                      R"("traffic":{"journal":{"bytes":1048576,"device_time_us":0.5}},"label":"x","negative":-3})",
                      "GET /journal");
  CHECK(j.count("committed_transactions") == 42);
  CHECK(j.number("committed_transactions") == 42.0);
  CHECK(j.number("commit_latency_us.p50") == 8519.7);
  CHECK(j.number("commit_latency_us.p99") == 35127.0);
  CHECK(j.count("traffic.journal.bytes") == 1048576);
  CHECK(j.number("traffic.journal.device_time_us") == 0.5);

  CHECK_THROWS_WITH(j.number("traffic.ordered.bytes"),
                    "GET /journal: no traffic.ordered.bytes in the answer (ordered is missing)");
  CHECK_THROWS_WITH(j.number("commit_latency_us.p50.x"),
                    "GET /journal: no commit_latency_us.p50.x in the answer (x is missing)");
  CHECK_THROWS_WITH(j.number("label"), "GET /journal: label is not a number: \"x\"");
  CHECK_THROWS_WITH(j.number("traffic"), Catch::StartsWith("GET /journal: traffic is not a number: {"));
  // A count is a whole number from 0 up.
  CHECK_THROWS_WITH(j.count("commit_latency_us.p50"),
                    "GET /journal: commit_latency_us.p50 is not a whole number from 0 up: 8519.7");
  CHECK_THROWS_WITH(j.count("negative"), "GET /journal: negative is not a whole number from 0 up: -3");
}

TEST_CASE("JsonFigures refuses an answer that is not JSON, saying where it stops", "[report]") {
  CHECK_THROWS_WITH(JsonFigures("{\"a\":1,", "GET /stats"), Catch::StartsWith("GET /stats: not JSON: ") &&
                                                                Catch::Contains("unexpected end of input"));
  CHECK_THROWS_WITH(JsonFigures("", "GET /stats"), Catch::StartsWith("GET /stats: not JSON: "));
  // Text after the document is not JSON either.
  CHECK_THROWS_WITH(JsonFigures("{} x", "GET /stats"), Catch::StartsWith("GET /stats: not JSON: "));
}

TEST_CASE("write_report_json writes one line of JSON that reads back the same", "[report]") {
  std::string t = (fs::temp_directory_path() / "nvj-report-XXXXXX").string();
  REQUIRE(::mkdtemp(t.data()) != nullptr);
  const fs::path dir = t;
  const nvj::Json doc{{"experiment", "x"}, {"quick", true}, {"seconds", nvj::json_round(12.345678, 3)},
                      {"name", "quote \" backslash \\ newline \n"}, {"runs", nvj::Json::array({1, 2})}};
  nvj::cli::write_report_json(dir / "out", "results.json", doc);
  std::ifstream in(dir / "out" / "results.json");
  std::stringstream text;
  text << in.rdbuf();
  fs::remove_all(dir);
  const std::string s = text.str();
  REQUIRE(!s.empty());
  CHECK(s.back() == '\n');
  CHECK(s.find('\n') == s.size() - 1);
  const nvj::Json back = nvj::parse_json(s, "results.json");
  CHECK(back == doc);
  CHECK(back["seconds"] == 12.346);
  // Keys stay in the order written.
  CHECK(back.begin().key() == "experiment");
}

TEST_CASE("rounded keeps a report's numbers short and numbers", "[report]") {
  CHECK(nvj::to_json_text(nvj::Json(nvj::json_round(12.345678, 2))) == "12.35");
  CHECK(nvj::to_json_text(nvj::Json(nvj::json_round(3.0, 1))) == "3.0");
  CHECK(nvj::to_json_text(nvj::Json(nvj::json_round(0.00004, 4))) == "0.0");
  CHECK(nvj::to_json_text(nvj::Json(nvj::json_round(940.19512, 3))) == "940.195");
}

TEST_CASE("a Markdown table cell keeps every character on one line, pipes escaped", "[report]") {
  CHECK(nvj::cli::markdown_cell("a|b") == "a\\|b");
  CHECK(nvj::cli::markdown_cell("first\nsecond\r\nthird") == "first second  third");
  const std::string long_text(500, 'x');
  CHECK(nvj::cli::markdown_cell(long_text) == long_text);  // nothing dropped
  // A row of two cells stays two cells.
  const std::string row = "| " + nvj::cli::markdown_cell("x | y\nz") + " | 2 |";
  std::size_t unescaped = 0;
  for (std::size_t i = 0; i < row.size(); ++i) unescaped += row[i] == '|' && (i == 0 || row[i - 1] != '\\');
  CHECK(unescaped == 3);
  CHECK(row.find('\n') == std::string::npos);
}

}  // namespace experiment_report_test
