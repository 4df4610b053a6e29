// SPDX-License-Identifier: BSD-3-Clause
// results.json of nvj crash check and merge: the recording, the options the
// states were enumerated and taken with, the counts per strategy, what was
// and was not checked (coverage), and one entry per state checked, in
// ordinal order: each failing one with what broke and its signature; the
// first few failing states of each signature (--per-signature) in full,
// with the changes they kept and dropped, their minimized cause and the
// kernel's verdict. A shard's results say which shard; merging every shard
// of a run gives, byte for byte, what one unsharded run writes (unless a
// shard was stopped early). Nothing in it depends on time or on the
// machine, but a shard's seconds and where a time limit stopped a check.
#pragma once

#include <string>
#include <vector>

#include "common/json.h"
#include "crashlab/causes/crash_cause.h"
#include "crashlab/index/recording_index.h"
#include "crashlab/judge/state_walk.h"
#include "tools/nvj/crash/shard.h"
#include "tools/nvj/crash/state_record.h"

namespace nvj::cli {

// One state checked.
struct CheckedState {
  const crashlab::SelectedState* selected = nullptr;
  const crashlab::CrashState* state = nullptr;
  const crashlab::CrashPoint* point = nullptr;
  crashlab::StateVerdict verdict;
};

// One state's entry: where, which, the verdict and (failing) what broke
// and its signature.
Json state_json(const crashlab::RecordingIndex& index, const CheckedState& checked);
// A failing state that is not detailed keeps of each violation only the
// path and what broke how (the expected and found texts go): thousands of
// them would make results.json heavy with the same words.
void slim_entry(Json& entry);
// "PATH: expected X, found Y", or for a slimmed one "PATH: WHAT HOW".
std::string violation_text(const Json& violation);
// Adds the changes the state kept and dropped (a detailed failing state).
void add_state_changes(Json& entry, const crashlab::RecordingIndex& index, const crashlab::CrashPoint& point,
                       const crashlab::CrashState& state);
// The signature of a state's entry, by either check: the fast path's (or,
// for XFS and btrfs, the kernel's) verdict, else "kernel only, " and the
// kernel's; empty for a state that passes both.
std::string entry_signature(const Json& entry);

// A verdict alone: {"verdict", "violations", "error"} (the last two when
// there is something to say).
Json verdict_json(const crashlab::StateVerdict& verdict);

// A failing state's minimized cause: whether one was found, whether it is
// minimal, the checks spent, and each dropped write with its region.
Json cause_json(const crashlab::RecordingIndex& index, const crashlab::CrashCause& cause);

// Whether two checks of one state agree: the same verdict, the same paths
// broken.
bool verdicts_agree(const crashlab::StateVerdict& a, const crashlab::StateVerdict& b);

// What a check took on and how far it got.
struct CheckLimits {
  std::string verify;               // none, failing, sample, all: which states the kernel checks too
  std::uint64_t sample = 0;         // with sample: one passing state in this many
  std::uint64_t max_states = 0;     // the budget (0: none)
  std::uint64_t per_signature = 0;  // failing states detailed per signature
  std::uint64_t max_findings = 0;   // the stop after so many of one signature (0: none)
  double time_limit = 0;            // seconds (0: none)
  std::string structure = "none";   // every: e2fsck on the structure of every state the fast path reads
};
struct CheckProgress {
  std::uint64_t mine = 0;     // this shard's states taken
  std::uint64_t checked = 0;  // of them, checked
  std::string stopped;        // "", "time limit", "interrupted", "findings"
  unsigned rounds = 0;        // rounds complete
  // The structure (tools/nvj/crash/structure_fsck.h): recovered metadata
  // images e2fsck checked, and states whose image was one checked before.
  // Not in results.json: a shard's differ from the whole run's.
  std::uint64_t structure_images = 0, structure_shared = 0;
};

// A results.json in memory: the document, whose "states" is an empty list,
// and the states' records in ordinal order; text() is the file.
struct Results {
  Json document;
  std::vector<StateRecord> states;
  std::string text() const { return results_text(document, states); }
};

// The whole document. `states` are the records of state_json's entries,
// in ordinal order; `filesystem` is the one on the data export (ext4: the
// states' verdicts are the fast path's; xfs, btrfs, or an ext4 the fast
// path does not read: the kernel's, `by_kernel`).
Results results_of(const std::string& recording, std::uint64_t recording_bytes, const std::string& filesystem,
                   bool by_kernel, const crashlab::RecordingIndex& index, const crashlab::CrashChecker& checker,
                   const Shard& shard, const CheckLimits& limits, const CheckProgress& progress,
                   std::vector<StateRecord> states);

// The shards' documents joined: they must come from the same recording and
// options and be shards of one count, each once; every state taken must be
// checked exactly once, unless a shard says it stopped early (then those it
// did not check are counted as not checked). Only the first per_signature
// failing states of each signature keep their details. A
// std::runtime_error naming the first thing that does not fit.
Results merge_results(const std::vector<Json>& shards, const std::vector<std::string>& names);

// A results.json read back: `path` is the file or the folder holding it.
// Throws naming the file when it cannot be read or is not JSON.
Json read_results(const std::string& path);
// DIR/results.json (DIR made if missing): one line per state
// (write_results_text). Throws naming the file when it cannot be written.
void write_results(const std::string& dir, const Results& results);

// Verdict totals of a document's states: pass, fail, unreadable, needs_fsck
// by the fast path; how many the ground truth checked, failed, and disagreed on.
struct VerdictCount {
  std::uint64_t checked = 0, pass = 0, fail = 0, unreadable = 0, needs_fsck = 0;
  std::uint64_t verified = 0, verified_failing = 0, disagree = 0;
  // States that break something, by either check.
  std::uint64_t failing = 0;
};
VerdictCount count_verdicts(const std::vector<StateRecord>& states);
// results.json's "verdicts".
Json verdicts_json(const VerdictCount& count);

}  // namespace nvj::cli
