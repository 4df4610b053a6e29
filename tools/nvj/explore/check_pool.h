// SPDX-License-Identifier: BSD-3-Clause
// CheckPool: the checks of recorded workloads, each in a child process of
// its own (fork: the check as check_workload runs it, its outcome written
// to DIR/outcome.json), at most `slots` at once, while the lab records the
// next workloads. A check is pure CPU and the kernel's own processes (e2fsck)
// where the run of a workload waits on the kernel and the server, so the two
// overlap, and on a machine with several cores several checks do.
//
// A child dies with the explorer (PR_SET_PDEATHSIG): a killed exploration
// leaves no check running into a workload folder that --resume runs again.
// stop() asks the children running to stop (SIGTERM: each check stops at its
// next state and takes its ground truth down) and waits for them; their
// outcomes are dropped, and the workloads run again on --resume.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <vector>

#include "crashlab/explore/workload.h"
#include "tools/nvj/explore/workload_run.h"

namespace nvj::cli {

struct CheckedWorkload {
  std::uint64_t ordinal = 0;
  crashlab::explore::Workload workload;
  std::filesystem::path dir;
  WorkloadOutcome outcome;  // every phase's time, the verdicts
};

class CheckPool {
 public:
  // `slots`: checks at once (at least 1).
  CheckPool(const ExploreContext& context, std::size_t slots);
  ~CheckPool();  // stop()
  CheckPool(const CheckPool&) = delete;
  CheckPool& operator=(const CheckPool&) = delete;

  // Starts the check of a workload recorded in `dir`, once a slot is free
  // (waiting for a check to end while none is; those that end are kept for
  // finished()). Throws if fork fails.
  void start(std::uint64_t ordinal, const crashlab::explore::Workload& workload, const std::filesystem::path& dir,
             RecordedWorkload recorded);
  // The checks ended since the last call, in the order they ended; with
  // `all`, after waiting for every one running. Throws if a check failed
  // to run (its child's error, as check_workload would have thrown it).
  std::vector<CheckedWorkload> finished(bool all);
  // Stops the checks running and waits for them (their outcomes dropped).
  void stop() noexcept;

  std::size_t running() const { return running_.size(); }

 private:
  struct Running {
    pid_t pid;
    CheckedWorkload checked;
  };
  // Waits for one child to end (blocking or not); false if none ended.
  bool reap(bool block);

  const ExploreContext& context_;
  std::size_t slots_;
  std::vector<Running> running_;
  std::vector<CheckedWorkload> ended_;
};

// Checks at once on this machine: one per online CPU.
std::size_t default_check_slots();

}  // namespace nvj::cli
