// SPDX-License-Identifier: BSD-3-Clause
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "crashlab/explore/fstests.h"
#include "crashlab/explore/generator.h"
#include "crashlab/facts/fact_checker.h"
#include "tests/support/temp_dir.h"
#include "tools/nvj/crash/ground_truth.h"
#include "tools/workloads/explore_steps.h"

namespace explore_fstests_test {

using crashlab::explore::Expect;
using crashlab::explore::fstests_rules;
using crashlab::explore::fstests_scenarios;
using crashlab::explore::Generator;
using crashlab::explore::OpKind;
using crashlab::explore::Scenario;
using crashlab::explore::Step;

namespace fs = std::filesystem;

namespace {

// As explore_generator_test: the persistence calls only open what they name.
constexpr auto kOpenOnly = nvj::workloads::PersistCalls::open_only;

// docs/explore-rules.md's table of fstests' tests: each test's last column.
std::map<std::string, std::string> documented() {
  std::ifstream in(std::string(NVJ_SOURCE_DIR) + "/docs/explore-rules.md");
  std::map<std::string, std::string> out;
  const std::regex row(R"(^\| (generic/[0-9]{3}) \| [^|]+ \| (.+) \|$)");
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (std::regex_match(line, m, row)) out[m[1]] = m[2];
  }
  return out;
}

}  // namespace

TEST_CASE("every fstests scenario runs on a real filesystem, its expectations read from what it leaves", "[explore]") {
  std::set<std::string> names;
  std::size_t expectations = 0;
  for (const Scenario& s : fstests_scenarios()) {
    INFO(s.name);
    CHECK(names.insert(s.name).second);
    REQUIRE(!s.steps.empty());
    CHECK(s.steps.back().persist != crashlab::explore::Persist::none);
    // What a test asserts, it asserts after its power cut: after the last step.
    for (std::size_t i = 0; i + 1 < s.steps.size(); ++i) CHECK(s.steps[i].expect.empty());
    const nvj::test::TempDir dir(fs::current_path());
    crashlab::explore::Oracle oracle({true});
    crashlab::FactChecker facts;
    std::size_t ruled = 0, expected = 0;
    for (const Step& step : s.steps) {
      std::vector<crashlab::explore::RuledFact> before, after;
      REQUIRE_NOTHROW(before = oracle.before(step.op, nvj::workloads::live_tree(dir.path)));
      REQUIRE_NOTHROW(nvj::workloads::run_step(dir.path, step, kOpenOnly));
      REQUIRE_NOTHROW(after = oracle.after(step, nvj::workloads::live_tree(dir.path)));
      for (const auto& f : before) facts.add(f.fact);
      for (const auto& f : after) facts.add(f.fact);
      for (const auto& f : after) ruled += f.rule == s.test;
      for (const Expect& e : step.expect) CHECK(e.rule == s.test);
      expected += step.expect.size();
    }
    expectations += expected;
    CHECK(ruled == expected);  // one fact for each expectation, citing the test
    // The oracle's self-check, as the explorer makes it on the final state:
    // every fact holds on the tree the scenario leaves (nothing crashed).
    CHECK(facts.check(nvj::cli::DirectoryFacts(dir.path)).empty());
  }
  CHECK(expectations > 100);
}

TEST_CASE("an expectation of what the live tree does not hold is the scenario's error, named", "[explore]") {
  const nvj::test::TempDir dir(fs::current_path());
  crashlab::explore::Oracle oracle({true});
  Step step;
  step.op = {OpKind::creat, "foo", ""};
  step.persist = crashlab::explore::Persist::fsync;
  step.persist_path = "foo";
  step.expect = {Expect{crashlab::FactKind::entry, "bar", "generic/999"}};
  nvj::workloads::run_step(dir.path, step, kOpenOnly);
  CHECK_THROWS_WITH(oracle.after(step, nvj::workloads::live_tree(dir.path)),
                    "generic/999 expects bar; it is not there");
  step.expect = {Expect{crashlab::FactKind::absent, "foo", "generic/999"}};
  CHECK_THROWS_WITH(oracle.after(step, nvj::workloads::live_tree(dir.path)),
                    "generic/999 expects foo absent; it is there");
}

TEST_CASE("the fstests bound lists every scenario; --ops keeps those whose own steps it names", "[explore]") {
  const Generator all = crashlab::explore::generator_named("fstests");
  REQUIRE(all.count() == fstests_scenarios().size());
  CHECK(all.listed());  // its scenarios are never reduced to fewer steps
  CHECK_FALSE(Generator(1).listed());
  for (std::uint64_t i = 0; i < all.count(); ++i) {
    CHECK(all.at(i).ordinal == i);
    CHECK(all.at(i).name == fstests_scenarios()[i].name);
  }
  CHECK_THROWS_AS(all.at(all.count()), std::out_of_range);
  const Generator links = crashlab::explore::generator_named("fstests", {OpKind::creat, OpKind::link, OpKind::mkdir});
  CHECK(links.count() >= 37);  // generic/520's cases at least
  CHECK(links.count() < all.count());
  for (std::uint64_t i = 0; i < links.count(); ++i)
    for (const Step& s : links.at(i).steps)
      if (!s.setup && s.op.kind != OpKind::nothing)
        CHECK((s.op.kind == OpKind::creat || s.op.kind == OpKind::link || s.op.kind == OpKind::mkdir));
  CHECK_THROWS_WITH(crashlab::explore::generator_named("fstest"),
                    "--bound fstest: expected seq-1, seq-2, seq-3, seq-3-data, seq-3-metadata, seq-3-nested or fstests");
  CHECK_THROWS_WITH(crashlab::explore::generator_named("fstests", {OpKind::symlink}),
                    "--bound fstests: no scenario's own steps are all among the operations given (--ops)");
}

TEST_CASE("every test the scenarios cite has its rule and its row in docs/explore-rules.md, and every row said "
          "to be in the bound has its scenarios",
          "[explore]") {
  const auto docs = documented();
  CHECK(docs.size() == 67);
  std::set<std::string> cited, ruled;
  for (const Scenario& s : fstests_scenarios()) cited.insert(s.test);
  for (const auto& r : fstests_rules()) {
    CHECK(ruled.insert(r.id).second);
    CHECK(std::string(r.source) == "fstests tests/" + std::string(r.id));
    CHECK_NOTHROW(crashlab::explore::rule(r.id));
  }
  CHECK(cited == ruled);
  for (const auto& [test, verdict] : docs) {
    INFO(test << ": " << verdict);
    CHECK(cited.count(test) == (verdict.rfind("yes", 0) == 0 ? 1u : 0u));
    if (verdict.rfind("no", 0) == 0) CHECK(verdict.size() > 4);  // says why
  }
}

}  // namespace explore_fstests_test
