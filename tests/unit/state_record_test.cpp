// SPDX-License-Identifier: BSD-3-Clause
// results.json's states as records (tools/nvj/crash/state_record.h): what a
// record reads of its entry, and the document's text with the records
// spliced in, one state a line, read back as the same JSON.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "tools/nvj/crash/state_record.h"

namespace state_record_test {

using nvj::Json;
using nvj::cli::StateRecord;

namespace {

Json entry(std::uint64_t ordinal, const char* verdict) {
  return Json{{"ordinal", ordinal}, {"position", ordinal}, {"point", 3},         {"frame", 40},
              {"at", {"mark"}},     {"last_mark", nullptr}, {"strategy", "keep2"}, {"volatile", 4},
              {"kept", 2},          {"verdict", verdict}};
}

}  // namespace

TEST_CASE("a state's record reads its entry: verdict, strategy, mark, the kernel's check, its signature", "[crash]") {
  const StateRecord pass = nvj::cli::record_state(entry(7, "pass"));
  CHECK(pass.ordinal == 7);
  CHECK(pass.point == 3);
  CHECK(pass.frame == 40);
  CHECK(pass.strategy == crashlab::Strategy::keep2);
  CHECK(pass.verdict == crashlab::Verdict::pass);
  CHECK_FALSE(pass.failing());
  CHECK_FALSE(pass.verified);
  CHECK(pass.last_mark.empty());
  CHECK(pass.line.find('\n') == std::string::npos);
  CHECK(pass.entry() == entry(7, "pass"));

  // Passed by the fast path, failed by the kernel: "kernel only", and the
  // signature set again, last.
  Json e = entry(9, "pass");
  e["last_mark"] = "fact file A/foo";
  e["signature"] = "stale";
  e["ground_truth"] = Json{{"verdict", "unreadable"}, {"error", "mount: bad superblock"}};
  e["agree"] = false;
  const StateRecord truth = nvj::cli::record_state(e);
  CHECK(truth.failing());
  CHECK(truth.signature.rfind("kernel only, ", 0) == 0);
  CHECK(truth.verified);
  CHECK(truth.truth_failing);
  CHECK_FALSE(truth.agree);
  CHECK(truth.last_mark == "fact file A/foo");
  const Json back = truth.entry();
  CHECK(back.at("signature") == truth.signature);
  CHECK(std::prev(back.end()).key() == "signature");

  Json bad = entry(1, "pass");
  bad["strategy"] = "guess";
  CHECK_THROWS_WITH(nvj::cli::record_state(bad), Catch::Contains("'guess'"));
}

TEST_CASE("results.json's text is the document with one state a line, read back as the same JSON", "[crash]") {
  Json document{{"recording", Json{{"path", "r.nvjrec"}}}, {"signatures", Json::array()}, {"states", Json::array()},
                {"verdicts", Json{{"checked", 2}}}};
  std::vector<StateRecord> states{nvj::cli::record_state(entry(0, "pass")), nvj::cli::record_state(entry(5, "pass"))};
  const std::string text = nvj::cli::results_text(document, states);
  CHECK(text.find("\n \"states\": [\n  " + states[0].line + ",\n  " + states[1].line + "\n ],\n") != std::string::npos);
  CHECK(text.back() == '\n');
  Json read = nvj::parse_json(text, "results.json");
  CHECK(read.at("states").size() == 2);
  CHECK(read.at("states")[1] == entry(5, "pass"));
  CHECK(read.at("verdicts").at("checked") == 2);
  // Taken out again and written back: the same bytes.
  const std::vector<StateRecord> taken = nvj::cli::take_states(read);
  CHECK(read.at("states").empty());
  CHECK(nvj::cli::results_text(read, taken) == text);
  // No state: an empty list.
  CHECK(nvj::cli::results_text(document, {}).find("\"states\": [],") != std::string::npos);
  // A document whose states are not set aside is refused.
  document["states"] = Json::array({1});
  CHECK_THROWS_AS(nvj::cli::results_text(document, states), std::logic_error);
}

}  // namespace state_record_test
