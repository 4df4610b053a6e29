// SPDX-License-Identifier: BSD-3-Clause
// nvj crash check: check a recording's crash states by the fast path
// (crashlab/judge/state_walk.h) and, on those it fails and a sample of the
// others, by the ground truth (ground_truth.h), a shard of them or all.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/command_line.h"
#include "common/json.h"
#include "crashlab/judge/state_walk.h"

namespace nvj::cli {

class RunFolder;

struct CheckArgs {
  std::string recording;
  std::string shard;  // "I/N"; empty: from the environment (shard.h)
  std::string out;    // a folder for results.json; empty: none
  // The ground truth (ground_truth.h): none, failing (the first failing
  // states of each signature), sample (those and one passing state in
  // `sample`), all. Empty: sample, or none where it cannot run (not root).
  std::string verify;
  std::uint64_t sample = 64;
  // The failing states of each signature detailed (changes, minimized
  // cause, the kernel's verdict): the first ones.
  std::uint64_t per_signature = 3;
  // Unique states checked at most, a sample spread over the points and
  // strategies; 0: every one. Unset: kFastBudget by the fast path,
  // kKernelBudget by the kernel alone.
  std::uint64_t max_states = 0;
  bool max_states_given = false;
  std::uint64_t max_findings = 0;  // stop once a signature has this many failing states; 0: never
  std::int64_t time_limit_ns = 0;  // stop checking new states after this long; 0: never
  std::string scratch;        // the ground truth's files; empty: a new folder in scratch_parent
  std::string scratch_parent; // where that folder is made; empty: default_scratch_parent()
  std::string mount_options;  // the ground truth's mount, besides journal_path=
  // The Linux release whose journal recovery the fast path follows
  // (fscore::jbd2::recovery_rules_of); empty: this machine's, the kernel
  // the ground truth mounts with.
  std::string recovery_kernel;
  // every: e2fsck on the structure of every state the fast path reads
  // (structure_fsck.h); none: the facts alone.
  std::string structure = "every";
  crashlab::CheckOptions options;
  bool no_marks = false, no_persistence = false;
  std::uint64_t every = 0;
  // nvj crash run's folder (run_folder.h), which the check shares; null:
  // the check makes its own.
  const RunFolder* run_folder = nullptr;
  // --during-recovery N: N of the passing states (0: every one) recovered
  // again under a recording, and each recovery's crash states checked
  // (recovery_check.h).
  std::uint64_t during_recovery = 0;
  bool during_recovery_given = false;
  // The report's plots (gnuplot: states.png, states.svg) for a check with
  // no failing state; false: table.md and states.dat only (the explorer's
  // passing workloads, where two gnuplot runs cost more than the check).
  bool plots_when_passing = true;
  // How the recording was made, for results.json's recording.made_by (nvj
  // crash run --vm: the guest's kernel and transport); null: not said.
  Json made_by = nullptr;
};
// The crash points and strategies the arguments name: what numbers the
// states (their ordinals) as nvj crash check, image and frames number them.
crashlab::CheckOptions enumeration_of(const CheckArgs& args);

inline constexpr std::uint64_t kFastBudget = 20000;
inline constexpr std::uint64_t kKernelBudget = 1000;
int crash_check_main(const CheckArgs& args);

// --shard, --out, --verify, --sample, --scratch, --per-signature,
// --max-states, --time-limit, --max-findings, --structure,
// --recovery-kernel, and the points and strategies (state_options.h): what
// nvj crash check and run share.
void check_options(Command& c, CheckArgs& check);
// RECORDING and the options that number its states (state_options.h): how
// nvj crash image and frames name a state of a recording, as check numbers it.
void recording_options(Command& c, CheckArgs& check);

}  // namespace nvj::cli
