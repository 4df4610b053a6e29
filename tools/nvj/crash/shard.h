// SPDX-License-Identifier: BSD-3-Clause
// Which slice of the crash states this run checks: `--shard I/N`, or else
// the index a batch engine gives each task of an array of N:
//   Slurm job arrays     SLURM_ARRAY_TASK_ID less SLURM_ARRAY_TASK_MIN, of
//                        SLURM_ARRAY_TASK_COUNT (--array=0-3 or 1-4 alike)
//   Kubernetes Indexed   JOB_COMPLETION_INDEX, of NVJ_SHARD_COUNT (the Job's
//   Jobs                 completions, which Kubernetes does not export:
//                        the manifest sets it)
// and the whole (0/1) when none is set.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

namespace nvj::cli {

struct Shard {
  std::uint64_t index = 0;
  std::uint64_t count = 1;
  std::string source;  // "--shard", "Slurm", "Kubernetes", "" (the whole)
};

// "I/N" with I < N; a UsageError naming the text otherwise.
Shard parse_shard(const std::string& text);

// From the environment (`getenv` looks a variable up: nullopt when unset);
// a UsageError naming the variable whose value is no index, or a count
// missing.
Shard shard_from_environment(const std::function<std::optional<std::string>(const char*)>& getenv);

// `--shard`'s text when given, else this process's environment.
Shard shard_given_or_from_environment(const std::string& given);

}  // namespace nvj::cli
