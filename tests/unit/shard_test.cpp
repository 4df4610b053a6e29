// SPDX-License-Identifier: BSD-3-Clause
// A check's or an exploration's shard from a job array's environment:
// Slurm's task ID is placed among the array's IDs, whatever their range
// and step; Kubernetes' completion index is the shard itself.
#include <catch2/catch.hpp>

#include <map>
#include <optional>
#include <string>

#include "common/command_line.h"
#include "tools/nvj/crash/shard.h"

namespace shard_test {

using nvj::cli::Shard;
using nvj::cli::UsageError;

namespace {

Shard from(const std::map<std::string, std::string>& env) {
  return nvj::cli::shard_from_environment([&](const char* name) -> std::optional<std::string> {
    const auto it = env.find(name);
    return it == env.end() ? std::nullopt : std::optional<std::string>(it->second);
  });
}

// Every task of an array: its shards, in the order of the IDs.
std::vector<std::uint64_t> shards_of(const std::vector<std::uint64_t>& ids, const std::string& step) {
  std::vector<std::uint64_t> out;
  for (const std::uint64_t id : ids) {
    std::map<std::string, std::string> env{{"SLURM_ARRAY_TASK_ID", std::to_string(id)},
                                           {"SLURM_ARRAY_TASK_COUNT", std::to_string(ids.size())},
                                           {"SLURM_ARRAY_TASK_MIN", std::to_string(ids.front())},
                                           {"SLURM_ARRAY_TASK_MAX", std::to_string(ids.back())}};
    if (!step.empty()) env["SLURM_ARRAY_TASK_STEP"] = step;
    const Shard s = from(env);
    CHECK(s.count == ids.size());
    out.push_back(s.index);
  }
  return out;
}

}  // namespace

TEST_CASE("a Slurm array's tasks are shards 0 to N-1 whatever its range and step", "[shard]") {
  const std::vector<std::uint64_t> all{0, 1, 2, 3};
  CHECK(shards_of({0, 1, 2, 3}, "1") == all);
  CHECK(shards_of({4, 5, 6, 7}, "") == all);        // --array=4-7
  CHECK(shards_of({0, 2, 4, 6}, "2") == all);       // --array=0-6:2
  CHECK(shards_of({0, 2, 4, 6}, "") == all);        // the step inferred
  CHECK(shards_of({1, 3, 5}, "") == std::vector<std::uint64_t>{0, 1, 2});  // --array=1,3,5
  CHECK(shards_of({7}, "") == std::vector<std::uint64_t>{0});
}

TEST_CASE("a Slurm array whose IDs are not evenly spaced, or an ID outside it, is refused", "[shard]") {
  // --array=1,2,5: three tasks from 1 to 5.
  const std::map<std::string, std::string> uneven{{"SLURM_ARRAY_TASK_ID", "2"}, {"SLURM_ARRAY_TASK_COUNT", "3"},
                                                  {"SLURM_ARRAY_TASK_MIN", "1"}, {"SLURM_ARRAY_TASK_MAX", "5"}};
  CHECK_THROWS_WITH(from(uneven), Catch::Contains("not evenly spaced") && Catch::Contains("--shard I/N"));
  CHECK_THROWS_WITH(from({{"SLURM_ARRAY_TASK_ID", "9"}, {"SLURM_ARRAY_TASK_COUNT", "4"},
                          {"SLURM_ARRAY_TASK_MIN", "0"}, {"SLURM_ARRAY_TASK_MAX", "6"}}),
                    Catch::Contains("outside"));
  CHECK_THROWS_WITH(from({{"SLURM_ARRAY_TASK_ID", "3"}, {"SLURM_ARRAY_TASK_COUNT", "4"},
                          {"SLURM_ARRAY_TASK_MIN", "0"}, {"SLURM_ARRAY_TASK_MAX", "6"},
                          {"SLURM_ARRAY_TASK_STEP", "2"}}),
                    Catch::Contains("not evenly spaced"));
  CHECK_THROWS_AS(from({{"SLURM_ARRAY_TASK_ID", "1"}}), UsageError);  // no count: not an array
  CHECK_THROWS_AS(from({{"SLURM_ARRAY_TASK_ID", "x"}, {"SLURM_ARRAY_TASK_COUNT", "2"}}), UsageError);
}

TEST_CASE("Kubernetes' completion index with NVJ_SHARD_COUNT, and no array at all", "[shard]") {
  const Shard k = from({{"JOB_COMPLETION_INDEX", "2"}, {"NVJ_SHARD_COUNT", "5"}});
  CHECK(k.index == 2);
  CHECK(k.count == 5);
  CHECK_THROWS_AS(from({{"JOB_COMPLETION_INDEX", "2"}}), UsageError);
  const Shard none = from({});
  CHECK(none.index == 0);
  CHECK(none.count == 1);
}

}  // namespace shard_test
