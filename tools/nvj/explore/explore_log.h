// SPDX-License-Identifier: BSD-3-Clause
// What makes a long exploration last: OUT/plan.json, written before the
// first workload (the options as run, the shard resolved, and the ordinals
// of every workload to explore, in order), and OUT/outcomes.jsonl, one line
// per workload as it ends (its explore.json entry, its phases' seconds and
// its check's exit status), each line on disk before the next workload
// starts. nvj crash explore --resume OUT reads both and explores the
// workloads no line names yet, so that a run killed (a signal, a reboot, a
// Slurm preemption) ends, once resumed, with the explore.json of a run never
// stopped but for its time.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "common/json.h"
#include "common/unique_fd.h"

namespace nvj::cli {

struct ExplorePlan {
  Json options;                          // as explore_options_json writes them
  std::vector<std::uint64_t> workloads;  // in the order they run
};

// OUT/plan.json, replaced whole (written beside, then renamed).
void write_plan(const std::filesystem::path& out, const ExplorePlan& plan);
// OUT/plan.json; std::runtime_error naming the file and what is wrong.
ExplorePlan read_plan(const std::filesystem::path& out);

// One workload's line: {"ordinal", "entry", "phases", "status"}.
struct LoggedOutcome {
  std::uint64_t ordinal = 0;
  Json entry;                  // its explore.json entry, as written
  std::vector<double> phases;  // seconds, in kExplorePhases' order
  int status = 0;              // nvj crash check's
};

// OUT/outcomes.jsonl's lines. A last line cut short (the run killed while
// writing it) is dropped; any other line that is no outcome is an error
// naming the file and the line.
std::vector<LoggedOutcome> read_outcomes(const std::filesystem::path& out);

// Appends outcomes to OUT/outcomes.jsonl, each one written and synced
// before append() returns.
class OutcomeLog {
 public:
  explicit OutcomeLog(const std::filesystem::path& out);
  void append(const LoggedOutcome& outcome);

 private:
  std::filesystem::path path_;
  UniqueFd fd_;
};

}  // namespace nvj::cli
