// SPDX-License-Identifier: BSD-3-Clause
// Carries out the explorer's steps (crashlab/explore/workload.h) in a
// mounted filesystem with the system calls they name, takes the live tree
// the oracle reads, and runs a whole workload with its oracle's facts
// posted around each step. The same code runs on the host (nvj crash
// explore) and in a guest (nvj-workload explore-steps, for --vm). Every
// failing call throws std::runtime_error naming the step and the errno.
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "common/json.h"
#include "crashlab/explore/oracle.h"
#include "crashlab/explore/workload.h"

namespace nvj::workloads {

// What run_step does of a step's persistence call: makes it, as a workload
// does; or only opens the name it is made on (a missing one still fails),
// for a caller that reads the tree the steps leave and crashes nothing,
// where the call changes nothing and sync(2) or fsync(2) would wait on every
// writer of the machine.
enum class PersistCalls { make, open_only };

// The step's operation, then its persistence call.
void run_step(const std::filesystem::path& root, const crashlab::explore::Step& step,
              PersistCalls calls = PersistCalls::make);
// Each alone: the operation; the persistence call.
void run_operation(const std::filesystem::path& root, const crashlab::explore::Step& step);
void run_persist(const std::filesystem::path& root, const crashlab::explore::Step& step,
                 PersistCalls calls = PersistCalls::make);

// Every name under `root` (lost+found left out), files read whole.
crashlab::explore::LiveTree live_tree(const std::filesystem::path& root);

// The options of nvj-workload explore-steps that give its oracle `options`
// (" --auto-da-alloc --no-stale-data-rule --promises-tested"; "" for the
// defaults).
std::string oracle_flags(const crashlab::explore::OracleOptions& options);

// How the steps run besides their own calls. periodic_commit: after each
// core operation, before its persistence call, a point where a system left
// alone would be a few seconds later: every file's dirty pages written back
// as the kernel's flusher writes them (sync_file_range(2) WRITE and WAIT:
// no flush, no commit asked for), then kPeriodicCommitWait for the
// journal's periodic commit (the filesystem mounted with commit=1). What
// that commit makes durable no persistence call promised: it is a crash
// point the unmount's own commit and flush would otherwise hide.
struct StepOptions {
  bool periodic_commit = false;
};
inline constexpr unsigned kPeriodicCommitWaitMs = 2000;  // commit=1's interval and a second

// The options of nvj-workload explore-steps that give `options`
// (" --periodic-commit"; "" for the defaults).
std::string step_flags(const StepOptions& options);

// The periodic-commit point: the dirty pages of every regular file under
// `root` written back and waited for, then the wait. std::runtime_error
// naming a file that cannot be opened or written back.
void periodic_commit_point(const std::filesystem::path& root);

// A fact posted, and the rule it stands for ("" for one that only voids).
struct PostedFact {
  std::string label;
  std::string rule;
};

struct TracedStep {
  crashlab::explore::Step step;
  // Posted before its operation, after it (before its persistence call),
  // after its persistence call.
  std::vector<PostedFact> before, written, after;
};

// What a workload did: its steps up to the one that failed, each with the
// facts posted around it, and that failure ("" when every step ran).
struct ExploreTrace {
  std::vector<TracedStep> steps;
  std::string error;
};

// Runs `workload` in `root`: before each operation the facts that void what
// it changes, after it what no crash may show of the files' blocks, after
// its persistence call what that call made durable, each
// posted with `post` (which returns once the server has it) before the next
// system call; with steps.periodic_commit, the periodic-commit point after
// each core operation's facts. A step that fails ends the run: the trace's error names it.
ExploreTrace run_workload_steps(const std::filesystem::path& root, const crashlab::explore::Workload& workload,
                                crashlab::explore::OracleOptions options,
                                const std::function<void(const std::string& label)>& post,
                                StepOptions steps = {});

// The trace as JSON ({"error": null | "...", "steps": [{"before": [[label,
// rule]...], "after": [...]}]}), and back for the workload it was run for:
// std::runtime_error naming what does not fit (more steps than the workload
// has, a malformed entry).
Json trace_to_json(const ExploreTrace& trace);
ExploreTrace trace_from_json(const Json& json, const crashlab::explore::Workload& workload);

}  // namespace nvj::workloads
