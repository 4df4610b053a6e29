// SPDX-License-Identifier: BSD-3-Clause
// One generated workload run on the explorer's lab and checked
// (run_workload), and a failing one minimized (minimize): the explorer's
// loop body, apart from its command line and report (explore_command.cpp).
#pragma once

#include <cstdint>
#include <filesystem>
#include <iterator>
#include <optional>
#include <set>
#include <string>

#include "common/json.h"
#include "crashlab/explore/oracle.h"
#include "crashlab/explore/workload.h"
#include "tools/nvj/explore/explore_command.h"
#include "tools/nvj/host/processes/run_folder.h"
#include "tools/nvj/testbed/testbed.h"
#include "tools/workloads/explore_steps.h"

namespace nvj::cli {

// The kept base as the kernel shows it right after a mount: its root's
// inode and links, its blocks and inodes, free and in all (statvfs). The
// same at every mount of the same base; a difference is the host serving
// something else than the base (an old page of a device's cache), which
// would make every crash state of the workload wrong.
struct MountedBase {
  std::uint64_t root_ino = 0, root_links = 0, blocks = 0, blocks_free = 0, files = 0, files_free = 0;
  bool operator==(const MountedBase&) const = default;
};
std::string describe(const MountedBase& b);
MountedBase mounted_base(const std::filesystem::path& mount_point);

// What every workload of one exploration shares: the lab (mounted between
// workloads, its base kept; none when a guest runs the workloads), the
// options, each workload's state budget.
struct ExploreContext {
  Testbed* lab;
  const ExploreArgs& args;
  std::uint64_t max_states;  // 0: every unique state
  const RunFolder& folder;
  std::string guest_kernel = {};  // the kernel a guest ran the workloads on, as --kernel names it exactly ("": this host)
  // The base as the first workload's mount showed it, which every later
  // mount must show again (run_workload); null: not checked.
  std::optional<MountedBase>* base = nullptr;
};

// Where a workload's time goes, in the order it goes there.
inline constexpr const char* kExplorePhases[] = {"restore and record", "mount", "steps and facts", "unmount", "check"};
inline constexpr std::size_t kExplorePhaseCount = std::size(kExplorePhases);

struct WorkloadOutcome {
  double seconds[kExplorePhaseCount] = {};
  std::string error;      // a step that failed (the workload was not checked)
  // A failing workload's: what its first failing states broke ("sync:
  // present missing": the rule, what and how), and its signature (those,
  // then the core operations).
  std::set<std::string> broke;
  std::string signature;
  // The final state (every write kept) breaks a fact: the oracle's own
  // error, with the workload and the fact; never a finding.
  std::string oracle_error;
  int status = 0;         // nvj crash check's
  std::uint64_t states = 0, failing = 0;
  Json failures = Json::array();  // three failing states (collect_failures), their violations with rule and source
  // --bound fstests: the state the test's own power cut leaves (every
  // volatile write dropped at the mark of its last step's last fact):
  // {"ordinal", "verdict", "failing_elsewhere"}, the last the failing
  // states other than it (what the lab adds to fstests); null when no
  // state is that one (the trace posted nothing).
  Json fstests_cut = nullptr;
  // --during-recovery: {"recovered", "checked", "failing", "states"} (the
  // states whose recovery had failing crash states: their ordinals); null
  // when not asked.
  Json recovery = nullptr;
  bool recovery_fails() const { return !recovery.is_null() && recovery.at("failing").get<std::uint64_t>() > 0; }
};

// One workload on the lab: the base restored (the host's caches of the
// exports dropped), recorded, mounted, its steps run with the oracle's
// facts posted, unmounted, and every state checked as nvj crash check
// does, into DIR (the recording, results.json, check.log; reproduce.sh
// when a state fails). A step that fails is the outcome's error.
WorkloadOutcome run_workload(const ExploreContext& context, const crashlab::explore::Workload& workload,
                     const std::filesystem::path& dir);

// run_workload's first half: restored, recorded, mounted, its steps run
// with the oracle's facts posted, unmounted; the trace of its steps and the
// outcome so far (its first four phases' times, or its error). The check
// (check_workload) may then run elsewhere: in another process (CheckPool).
struct RecordedWorkload {
  workloads::ExploreTrace trace;
  WorkloadOutcome outcome;
};
RecordedWorkload record_workload(const ExploreContext& context, const crashlab::explore::Workload& workload,
                                 const std::filesystem::path& dir);

// The second half of run_workload, for a workload run elsewhere (in a
// guest): its recording DIR/recording.nvjrec checked, with what its trace
// says was posted (the trace's error, if any, becomes the outcome's).
// Fills the outcome's check phase and verdicts.
void check_workload(const ExploreContext& context, const crashlab::explore::Workload& workload,
                    const std::filesystem::path& dir, const workloads::ExploreTrace& trace, WorkloadOutcome& outcome);

// The oracle's options for the exploration's filesystem and mount options.
crashlab::explore::OracleOptions oracle_options(const ExploreArgs& args);

// The fewest core steps of a failing workload that still fail the same way
// (one of the rules it broke, broken the same way: what and how): delta
// debugging one step at a time, which for three steps at most is its whole
// search; each try with the setup its steps need, run and checked as any
// workload, in DIR/try-K. The last step keeps a persistence call.
struct MinimalWorkload {
  crashlab::explore::Workload workload;  // the workload itself when no step can go
  WorkloadOutcome outcome;
  std::filesystem::path dir;  // the try that found it; empty: the workload itself
};
MinimalWorkload minimize(const ExploreContext& context, const crashlab::explore::Workload& workload, const WorkloadOutcome& failed,
                 const std::filesystem::path& dir);

}  // namespace nvj::cli
