// SPDX-License-Identifier: BSD-3-Clause
// One nvj crash check of a shard's states, in two passes.
//
// First every state taken, round by round (crashlab/judge/state_walk.h): its
// verdict (the fast path's, with e2fsck's on the structure it leaves, or for
// a filesystem the fast path does not read, the kernel's), and the kernel's
// verdict too on a sample of the passing
// states (--verify sample: one in --sample; all: every state). This pass
// stops early at a time limit, at SIGINT or SIGTERM, or once one signature
// has --max-findings failing states; what it checked by then is a sample
// spread over the whole recording.
//
// Then the first --per-signature failing states of each signature, by
// ordinal: the changes they kept and dropped, their cause minimized (the
// fast path as the test, or the kernel for XFS and btrfs), and for ext4
// the kernel's verdict on the state and on its cause. This pass is bounded
// by the number of signatures, not by the states, and stops at a signal.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "common/json.h"
#include "crashlab/judge/state_walk.h"
#include "tools/nvj/crash/results_json.h"

namespace nvj::cli {

struct SessionOptions {
  bool fast = true;              // the fast path decides (ext4 it reads); else the kernel
  bool verify_given = false;     // --verify was given: a ground truth that cannot run is an error
  std::string verify = "sample";  // none, failing, sample, all (the kernel's checks, for the fast path)
  // e2fsck on every state the fast path reads (structure_fsck.h), each
  // recovered metadata image once; where e2fsck cannot run, the check goes
  // on without it, saying so.
  bool structure = true;
  std::uint64_t sample = 64;
  std::uint64_t per_signature = 3;
  std::uint64_t max_findings = 0;
  double time_limit = 0;  // seconds; 0: none
  std::string filesystem;  // ext4, xfs, btrfs
  bool external_log = false;  // the filesystem's journal or log is on the journal export
  std::string mount_options;  // the kernel's mount
  // Where the kernel's files go: made at the first state that needs them.
  std::function<std::filesystem::path()> scratch;
};

struct SessionResult {
  // The workload's own final state (every change kept, in the order sent:
  // what a clean unmount leaves) judged by every fact, as verdict_json
  // gives it: a fact broken there is the facts' own error (the oracle's, or
  // a workload's that said what it did not do), no crash's.
  Json final_state;
  std::vector<StateRecord> states;  // of state_json's entries, in ordinal order
  CheckProgress progress;
  std::string verify;  // what the kernel did check (none where it could not run)
  bool structure = false;  // e2fsck checked the fast path's states (progress.structure_* say how many)
  double seconds = 0;
};

SessionResult run_judge_session(const crashlab::RecordingIndex& index, const crashlab::CrashChecker& checker,
                                const SessionOptions& options);

}  // namespace nvj::cli
