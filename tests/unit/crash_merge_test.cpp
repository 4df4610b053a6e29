// nvj crash merge's joining of shards (tools/nvj/crash/check_results.h):
// the causes a merge keeps are those one unsharded run would have
// minimized, the first --minimize failing states of all, though each shard
// minimized its own first ones; shards of other options are refused.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "tools/nvj/crash/check_results.h"

using nvj::Json;

namespace {

// A shard's results: 8 states in blocks of 2 (shard i of 2 holds ordinals
// with (ordinal / 2) % 2 == i); `failing` are the ordinals that fail, and
// the shard minimized the first `minimize` of its own.
Json shard(std::uint64_t index, const std::vector<std::uint64_t>& failing, std::uint64_t minimize) {
  Json states = Json::array();
  std::uint64_t minimized = 0;
  for (std::uint64_t o = 0; o < 8; ++o) {
    if ((o / 2) % 2 != index) continue;
    const bool fails = std::find(failing.begin(), failing.end(), o) != failing.end();
    Json s{{"ordinal", o}, {"verdict", fails ? "fail" : "pass"}};
    if (fails && minimized++ < minimize) s["cause"] = Json{{"found", false}, {"ordinal", o}};
    states.push_back(s);
  }
  return Json{{"recording", Json{{"bytes", 100}, {"frames", 10}, {"filesystem", "ext4"}}},
              {"options", Json{{"minimize", minimize}}},
              {"enumeration", Json{{"unique", 8}}},
              {"shard", Json{{"index", index}, {"count", 2}}},
              {"states", states}};
}

}  // namespace

TEST_CASE("a merge keeps the causes of the first --minimize failing states of all shards", "[crash]") {
  const std::vector<std::uint64_t> failing{1, 2, 3, 4, 6};  // shard 0: 1, 4; shard 1: 2, 3, 6
  const Json merged = nvj::cli::merge_results({shard(0, failing, 2), shard(1, failing, 2)}, {"s0", "s1"});
  std::vector<std::uint64_t> caused;
  for (const Json& s : merged.at("states"))
    if (s.contains("cause")) caused.push_back(s.at("ordinal").get<std::uint64_t>());
  // Shards minimized 1, 4 and 2, 3; one run would have minimized 1 and 2.
  CHECK(caused == std::vector<std::uint64_t>{1, 2});
  CHECK(merged.at("verdicts").at("fail") == 5);
  CHECK_FALSE(merged.contains("shard"));
}

TEST_CASE("shards checked with other options are not merged", "[crash]") {
  const std::vector<std::uint64_t> failing{1, 2};
  CHECK_THROWS_WITH(nvj::cli::merge_results({shard(0, failing, 2), shard(1, failing, 5)}, {"s0", "s1"}),
                    Catch::Contains("s1: its options differ from s0's"));
}
