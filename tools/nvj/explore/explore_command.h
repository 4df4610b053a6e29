// SPDX-License-Identifier: BSD-3-Clause
// nvj crash explore: the crash lab explores by itself. It enumerates the
// workloads of a bound (crashlab/explore/generator.h), runs each on one
// server and one mount of the filesystem after another, every one from the
// same freshly made filesystem (the server's kept base, POST /base/restore),
// with the facts its oracle derives from the persistence calls
// (crashlab/explore/oracle.h) posted as marks into a recording of its own,
// and checks every crash state of that recording as nvj crash check does.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "crashlab/explore/generator.h"

namespace nvj::cli {

struct ExploreArgs {
  std::string filesystem = "ext4";
  std::string bound = "seq-1";
  std::string ops;  // comma-separated operation names; empty: all
  std::string mount_options;
  // The rules' level: "posix" (the default) or "tested" (and fstests'
  // tests generalized; crashlab/explore/oracle.h, Rule::level).
  std::string promises = "posix";
  std::vector<std::string> parameters;  // the plugin's, over the defaults
  std::string shard;                    // "I/N"; empty: from the environment (as nvj crash check)
  std::string workload;  // ordinals, comma-separated; empty: every one of the shard
  bool list = false;
  bool no_minimize = false;  // else a failing workload's core steps are reduced while it fails the same way
  bool keep = false;  // the run folder
  // Which workloads' folders (OUT/workloads/N/) stay: "all", or "failing"
  // (a failing state, an error or the oracle's error; a passing workload's
  // folder is removed once its outcome is logged).
  std::string keep_workloads = "all";
  // --during-recovery N: each workload's check recovers N of its passing
  // states again under a recording and checks the recovery's crash states
  // (nvj crash check --during-recovery).
  std::uint64_t during_recovery = 0;
  bool during_recovery_given = false;
  std::string out;
  // Unique crash states checked per workload at most (0: every one): a
  // sample spread over its crash points, as nvj crash check takes it.
  std::uint64_t max_states = 0;
  bool max_states_given = false;
  std::string structure = "every";  // e2fsck on every ext4 state's structure (nvj crash check --structure)
  // --periodic-commit: after each core operation, every file written back
  // and a periodic commit waited for (workloads::StepOptions), the
  // filesystem mounted with commit=1 (added to mount_options when the
  // exploration starts; ext4 only).
  bool periodic_commit = false;
  // Run the workloads in a QEMU guest (one boot for all of them), once per
  // kernel: bzImage files; empty: the distribution's kernel.
  bool vm = false;
  std::vector<std::string> kernels;
  unsigned cpus = 0;  // the guest's processors (0: not given, one)
  // --sample N: a uniform random sample of N workloads of the bound (before
  // sharding), drawn with `seed` (--seed; else a random one, printed and
  // kept in explore.json).
  std::uint64_t sample = 0;
  std::uint64_t seed = 0;
  bool seed_given = false;
  // --resume OUT: go on with the exploration OUT's plan.json names, every
  // other option from there.
  std::string resume;
};

// The processors a --vm guest boots with.
inline unsigned guest_cpus(const ExploreArgs& args) { return args.cpus == 0 ? 1 : args.cpus; }

int crash_explore_main(const ExploreArgs& args);

// The enumeration the arguments name (--bound, --ops): UsageError for a
// bound or an operation that is none.
crashlab::explore::Generator explore_generator(const ExploreArgs& args);

}  // namespace nvj::cli
