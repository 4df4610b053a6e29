// SPDX-License-Identifier: BSD-3-Clause
// What nvj crash explore --vm's guest hands back (the trace of a workload
// run with its facts) survives the trip through JSON and the serial line's
// percent-encoding, and a trace that does not fit its workload is refused.
#include <catch2/catch.hpp>

#include <filesystem>
#include <string>
#include <vector>

#include "common/query_escape.h"
#include "crashlab/explore/generator.h"
#include "tests/support/temp_dir.h"
#include "tools/workloads/explore_steps.h"

namespace explore_trace_test {

namespace fs = std::filesystem;
using crashlab::explore::Generator;
using crashlab::explore::OpKind;
using nvj::workloads::ExploreTrace;

TEST_CASE("a workload's trace: every fact posted, in order, back from JSON over the serial line", "[explore]") {
  const nvj::test::TempDir dir(fs::current_path());
  const Generator g(2, {OpKind::write_overwrite, OpKind::rename_over});
  const crashlab::explore::Workload w = g.at(g.count() / 2);
  std::vector<std::string> posted;
  const ExploreTrace trace = nvj::workloads::run_workload_steps(dir.path, w, {true},
                                                                [&](const std::string& label) { posted.push_back(label); });
  REQUIRE(trace.error.empty());
  REQUIRE(trace.steps.size() == w.steps.size());
  std::vector<std::string> in_trace;
  bool ruled = false;
  for (const auto& s : trace.steps)
    for (const auto* facts : {&s.before, &s.written, &s.after})
      for (const auto& f : *facts) {
        in_trace.push_back(f.label);
        ruled = ruled || !f.rule.empty();
      }
  CHECK(in_trace == posted);
  CHECK(ruled);
  bool nostale = false;  // the operations' own facts, between each and its persistence call
  for (const auto& s : trace.steps)
    for (const auto& f : s.written) nostale = nostale || f.label.rfind("fact nostale ", 0) == 0;
  CHECK(nostale);

  const std::string line = nvj::query_escape(nvj::to_json_text(nvj::workloads::trace_to_json(trace)));
  CHECK(line.find_first_of(" \n") == std::string::npos);  // one line, one word
  const ExploreTrace back =
      nvj::workloads::trace_from_json(nvj::parse_json(nvj::query_unescape(line), "the trace"), w);
  REQUIRE(back.steps.size() == trace.steps.size());
  for (std::size_t i = 0; i < back.steps.size(); ++i) {
    CHECK(back.steps[i].step == w.steps[i]);
    REQUIRE(back.steps[i].written.size() == trace.steps[i].written.size());
    for (std::size_t k = 0; k < back.steps[i].written.size(); ++k)
      CHECK(back.steps[i].written[k].label == trace.steps[i].written[k].label);
    REQUIRE(back.steps[i].after.size() == trace.steps[i].after.size());
    for (std::size_t k = 0; k < back.steps[i].after.size(); ++k) {
      CHECK(back.steps[i].after[k].label == trace.steps[i].after[k].label);
      CHECK(back.steps[i].after[k].rule == trace.steps[i].after[k].rule);
    }
  }
}

TEST_CASE("a step that fails ends the trace with its error, which survives the trip", "[explore]") {
  const nvj::test::TempDir dir(fs::current_path());
  const Generator g(1, {OpKind::unlink});
  crashlab::explore::Workload w = g.at(0);
  w.steps.push_back(w.steps.back());  // the core unlink twice: the second fails
  const ExploreTrace trace = nvj::workloads::run_workload_steps(dir.path, w, {false}, [](const std::string&) {});
  REQUIRE_FALSE(trace.error.empty());
  CHECK(trace.error.find("unlink") != std::string::npos);
  CHECK(trace.steps.size() == w.steps.size());  // the failing step among them, its facts before it
  CHECK(trace.steps.back().after.empty());
  const ExploreTrace back = nvj::workloads::trace_from_json(nvj::workloads::trace_to_json(trace), w);
  CHECK(back.error == trace.error);
  CHECK(back.steps.size() == trace.steps.size());
}

TEST_CASE("a trace that does not fit its workload is refused, naming what is wrong", "[explore]") {
  const Generator g(1, {OpKind::creat});
  const crashlab::explore::Workload w = g.at(0);
  using nvj::Json;
  Json steps = Json::array();
  for (std::size_t i = 0; i <= w.steps.size(); ++i) steps.push_back(Json{{"before", Json::array()}, {"written", Json::array()}, {"after", Json::array()}});
  CHECK_THROWS_WITH(nvj::workloads::trace_from_json(Json{{"error", nullptr}, {"steps", steps}}, w),
                    Catch::Contains("steps"));
  CHECK_THROWS_WITH(nvj::workloads::trace_from_json(Json{{"error", nullptr}, {"steps", Json::array()}}, w),
                    Catch::Contains("without saying why"));
  Json bad = Json::array({Json{{"before", Json::array({Json::array({"fact absent A"})})}, {"written", Json::array()},
                               {"after", Json::array()}}});
  CHECK_THROWS_WITH(nvj::workloads::trace_from_json(Json{{"error", "x"}, {"steps", bad}}, w), Catch::Contains("[label, rule]"));
  CHECK_THROWS_WITH(nvj::workloads::trace_from_json(Json::array(), w), Catch::Contains("error"));
  Json old = Json::array({Json{{"before", Json::array()}, {"after", Json::array()}}});  // no "written"
  CHECK_THROWS_WITH(nvj::workloads::trace_from_json(Json{{"error", "x"}, {"steps", old}}, w), Catch::Contains("written"));
}

TEST_CASE("query_unescape undoes query_escape and refuses a broken escape", "[explore]") {
  std::string all;
  for (int c = 1; c < 256; ++c) all += static_cast<char>(c);
  CHECK(nvj::query_unescape(nvj::query_escape(all)) == all);
  CHECK(nvj::query_unescape("a+b%20c") == "a b c");
  CHECK_THROWS_AS(nvj::query_unescape("%4"), std::invalid_argument);
  CHECK_THROWS_AS(nvj::query_unescape("%zz"), std::invalid_argument);
}

}  // namespace explore_trace_test
