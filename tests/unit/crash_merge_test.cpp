// SPDX-License-Identifier: BSD-3-Clause
// nvj crash merge's joining of shards (tools/nvj/crash/results_json.h) on
// real checks: the fast path's session (judge_session.h, without the
// kernel) over an ext4 workload that lies about its facts
// (tests/support/ext4_workload.h), whole and in shards. The shards'
// results merged are the whole check's, byte for byte: the same states,
// verdicts, signatures and coverage, and the details (changes, minimized
// causes) of the first --per-signature failing states of each signature
// only, though each shard detailed its own first ones. Shards of other
// options, shards given twice or missing are refused.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "crashlab/judge/state_walk.h"
#include "tests/support/ext4_workload.h"
#include "tools/nvj/crash/judge_session.h"
#include "tools/nvj/crash/results_json.h"

namespace crash_merge_test {

using nvj::Json;

namespace {

struct Check {
  const crashlab::RecordingIndex& index;
  std::uint64_t per_signature = 2;
  std::uint64_t max_states = 0;

  // The check's results.json: its text, and as merge reads it.
  std::string text(std::uint64_t shard, std::uint64_t shards) const {
    crashlab::CheckOptions o;
    o.shard = shard;
    o.shards = shards;
    o.max_states = max_states;
    o.strategies.torn = 2;
    const crashlab::CrashChecker checker(index, o);
    nvj::cli::SessionOptions s;
    s.fast = true;
    s.verify = "none";
    s.verify_given = true;
    s.per_signature = per_signature;
    s.filesystem = "ext4";
    s.structure = false;
    nvj::cli::SessionResult r = nvj::cli::run_judge_session(index, checker, s);
    const nvj::cli::CheckLimits limits{r.verify, 64, max_states, per_signature, 0, 0};
    const nvj::cli::Results results =
        nvj::cli::results_of("rec.nvjrec", 1000, "ext4", false, index, checker,
                             nvj::cli::Shard{shard, shards, shards > 1 ? "--shard" : ""}, limits, r.progress,
                             std::move(r.states));
    return results.text();
  }
  Json run(std::uint64_t shard, std::uint64_t shards) const {
    return nvj::parse_json(text(shard, shards), "results.json");
  }
};

std::uint64_t with(const Json& results, const char* key) {
  std::uint64_t n = 0;
  for (const Json& s : results.at("states")) n += s.contains(key);
  return n;
}

}  // namespace

TEST_CASE("shards merged are the whole check, byte for byte, details of the first of each signature only", "[crash][merge]") {
  const nvj::test::Ext4Workload w = nvj::test::record_ext4_workload({false, 4, true});
  const crashlab::RecordingIndex index(w.recording);
  for (const std::uint64_t budget : {std::uint64_t{0}, std::uint64_t{300}}) {
    CAPTURE(budget);
    const Check check{index, 2, budget};
    const std::string whole_text = check.text(0, 1);
    const Json whole = nvj::parse_json(whole_text, "results.json");
    // One state a line.
    CHECK(static_cast<std::size_t>(std::count(whole_text.begin(), whole_text.end(), '\n')) >
          whole.at("states").size());
    CHECK(whole_text.find("\n  {\"ordinal\":0,\"position\":") != std::string::npos);
    REQUIRE(whole.at("verdicts").at("fail").get<std::uint64_t>() > 20);
    const std::uint64_t signatures = whole.at("signatures").size();
    CHECK(with(whole, "cause") == with(whole, "kept_changes"));
    CHECK(with(whole, "kept_changes") <= 2 * signatures);
    for (const std::uint64_t n : {2u, 3u}) {
      CAPTURE(n);
      std::vector<Json> shards;
      std::vector<std::string> names;
      std::uint64_t detailed = 0;
      for (std::uint64_t i = 0; i < n; ++i) {
        shards.push_back(check.run(i, n));
        detailed += with(shards.back(), "kept_changes");
        names.push_back("s" + std::to_string(i));
      }
      CHECK(detailed > with(whole, "kept_changes"));  // each shard detailed its own first ones
      const nvj::cli::Results merged = nvj::cli::merge_results(shards, names);
      CHECK(merged.text() == whole_text);
      // Refused: a shard missing, given twice, of other options.
      std::vector<Json> missing(shards.begin(), shards.end() - 1);
      CHECK_THROWS_WITH(nvj::cli::merge_results(missing, names), Catch::Contains("is missing"));
      std::vector<Json> twice = shards;
      twice.back() = shards.front();
      CHECK_THROWS_WITH(nvj::cli::merge_results(twice, names), Catch::Contains("is given twice"));
    }
  }
  const Json other = Check{index, 5, 0}.run(1, 2);
  CHECK_THROWS_WITH(nvj::cli::merge_results({Check{index, 2, 0}.run(0, 2), other}, {"s0", "s1"}),
                    Catch::Contains("s1: its options differ from s0's"));
}

}  // namespace crash_merge_test
