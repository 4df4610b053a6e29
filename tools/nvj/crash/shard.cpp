// SPDX-License-Identifier: BSD-3-Clause
#include "tools/nvj/crash/shard.h"

#include <charconv>
#include <cstdlib>

#include "common/command_line.h"

namespace nvj::cli {

namespace {

std::optional<std::uint64_t> whole(const std::string& text) {
  std::uint64_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty()) return std::nullopt;
  return v;
}

Shard checked(std::uint64_t index, std::uint64_t count, std::string source, const std::string& what) {
  if (count == 0 || index >= count || count > 1000000)
    throw UsageError(what + ": shard " + std::to_string(index) + " of " + std::to_string(count) +
                     ": the index must be below the count, the count at most 1000000");
  return Shard{index, count, std::move(source)};
}

}  // namespace

Shard parse_shard(const std::string& text) {
  const auto slash = text.find('/');
  const auto i = slash == std::string::npos ? std::nullopt : whole(text.substr(0, slash));
  const auto n = slash == std::string::npos ? std::nullopt : whole(text.substr(slash + 1));
  if (!i || !n) throw UsageError("--shard=" + text + ": expected I/N, as 0/4 (the first of 4)");
  return checked(*i, *n, "--shard", "--shard=" + text);
}

Shard shard_from_environment(const std::function<std::optional<std::string>(const char*)>& getenv) {
  const auto number = [&](const char* name) -> std::optional<std::uint64_t> {
    const auto text = getenv(name);
    if (!text) return std::nullopt;
    const auto v = whole(*text);
    if (!v) throw UsageError(std::string(name) + "=" + *text + ": expected a whole number");
    return v;
  };
  if (const auto id = number("SLURM_ARRAY_TASK_ID")) {
    const auto count = number("SLURM_ARRAY_TASK_COUNT");
    if (!count) throw UsageError("SLURM_ARRAY_TASK_ID is set and SLURM_ARRAY_TASK_COUNT is not: run as a job array");
    // An array's task IDs are MIN, MIN + STEP, ... MAX (--array=0-6:2 is 0,
    // 2, 4, 6; --array=1,3,5 is 1 to 5 by 2): the shard is the ID's place
    // among them. An array whose IDs are not evenly spaced (1,2,5) has no
    // such place: refused, naming the way out.
    const std::uint64_t min = number("SLURM_ARRAY_TASK_MIN").value_or(0);
    const std::uint64_t max = number("SLURM_ARRAY_TASK_MAX").value_or(min + *count - 1);
    if (*id < min || *id > max)
      throw UsageError("SLURM_ARRAY_TASK_ID=" + std::to_string(*id) + " is outside SLURM_ARRAY_TASK_MIN.." +
                       "SLURM_ARRAY_TASK_MAX (" + std::to_string(min) + ".." + std::to_string(max) + ")");
    std::uint64_t step = number("SLURM_ARRAY_TASK_STEP").value_or(0);
    if (step == 0) step = *count > 1 && (max - min) % (*count - 1) == 0 ? (max - min) / (*count - 1) : 1;
    if (step == 0 || (*id - min) % step != 0 || (*count > 0 && max - min != step * (*count - 1)))
      throw UsageError("the job array's task IDs (" + std::to_string(*count) + " from " + std::to_string(min) + " to " +
                       std::to_string(max) + ") are not evenly spaced: give each task --shard I/N, or use "
                       "--array=A-B or A-B:STEP");
    return checked((*id - min) / step, *count, "Slurm", "SLURM_ARRAY_TASK_ID");
  }
  if (const auto index = number("JOB_COMPLETION_INDEX")) {
    const auto count = number("NVJ_SHARD_COUNT");
    if (!count)
      throw UsageError("JOB_COMPLETION_INDEX is set and NVJ_SHARD_COUNT is not: set it to the Job's completions");
    return checked(*index, *count, "Kubernetes", "JOB_COMPLETION_INDEX");
  }
  return Shard{};
}

Shard shard_given_or_from_environment(const std::string& given) {
  if (!given.empty()) return parse_shard(given);
  return shard_from_environment([](const char* name) -> std::optional<std::string> {
    const char* v = std::getenv(name);
    return v == nullptr ? std::nullopt : std::optional<std::string>(v);
  });
}

}  // namespace nvj::cli
