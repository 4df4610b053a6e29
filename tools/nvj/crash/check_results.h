// results.json of nvj crash check and merge: the recording, the options the
// states were enumerated with, the counts per strategy, and one entry per
// state checked, in ordinal order (the failing ones with what broke and the
// writes they dropped). A shard's results say which shard; merging every
// shard of a run gives, byte for byte, what one unsharded run writes.
// Nothing in it depends on time or on the machine.
#pragma once

#include <string>
#include <vector>

#include "common/json.h"
#include "crashlab/crash_cause.h"
#include "crashlab/crash_check.h"
#include "crashlab/recording_index.h"
#include "tools/nvj/crash/shard.h"

namespace nvj::cli {

// One state's entry.
Json state_json(const crashlab::RecordingIndex& index, const crashlab::CheckedState& checked);

// A verdict alone: {"verdict", "violations", "error"} (the last two when
// there is something to say).
Json verdict_json(const crashlab::StateVerdict& verdict);

// A failing state's minimized cause: whether one was found, whether it is
// minimal, the checks spent, and each dropped write with its region.
Json cause_json(const crashlab::RecordingIndex& index, const crashlab::CrashCause& cause);

// Whether two checks of one state agree: the same verdict, the same paths
// broken.
bool verdicts_agree(const crashlab::StateVerdict& a, const crashlab::StateVerdict& b);

// The whole document. `states` are state_json's, in ordinal order;
// `filesystem` is the one on the data export (ext4: the states' verdicts
// are the fast path's; xfs, btrfs: the kernel's); `minimize`, how many
// failing states get a minimized cause (the first ones).
Json results_json(const std::string& recording, std::uint64_t recording_bytes, const std::string& filesystem,
                  const crashlab::RecordingIndex& index, const crashlab::CheckOptions& options,
                  const crashlab::Enumeration& enumeration, const Shard& shard, std::uint64_t minimize,
                  Json states);

// The shards' documents joined: they must come from the same recording and
// options and be shards of one count, each once; every unique state must be
// checked exactly once. A std::runtime_error naming the first thing that
// does not fit.
Json merge_results(const std::vector<Json>& shards, const std::vector<std::string>& names);

// A results.json read back: `path` is the file or the folder holding it.
// Throws naming the file when it cannot be read or is not JSON.
Json read_results(const std::string& path);

// Verdict totals of a document's states: pass, fail, unreadable by the
// fast path; how many the ground truth checked, failed, and disagreed on.
struct VerdictCount {
  std::uint64_t checked = 0, pass = 0, fail = 0, unreadable = 0;
  std::uint64_t verified = 0, verified_failing = 0, disagree = 0;
  // States that break something, by either check.
  std::uint64_t failing = 0;
};
VerdictCount count_verdicts(const Json& results);
// results.json's "verdicts".
Json verdicts_json(const VerdictCount& count);

}  // namespace nvj::cli
