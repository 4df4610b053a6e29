// SPDX-License-Identifier: BSD-3-Clause
// Crashes during recovery (nvj crash check --during-recovery N): a crash
// state that passed is served again by a server of its own, from its
// images, and the kernel mounts it (journal replay, orphan cleanup, log
// recovery) and unmounts it, recorded from before the mount; the marks in
// force at the state's crash point are posted first, so its facts hold at
// every crash point of that recording. The recovery's recording is then
// checked as any recording is (each of its crash states recovered once
// more, by the fast path or the kernel, against the same facts): a state
// failing there is a recovery that a power cut leaves worse than the crash
// it recovered from.
#pragma once

#include <cstdint>
#include <filesystem>
#include <vector>

#include "common/json.h"
#include "crashlab/index/recording_index.h"
#include "crashlab/judge/state_walk.h"
#include "tools/nvj/crash/check_command.h"
#include "tools/nvj/crash/state_record.h"

namespace nvj::cli {

// The passing states recovered: `count` of them spread evenly over the
// ordinals of those `states` holds (0: every one), ascending.
std::vector<std::uint64_t> recovery_picks(const std::vector<StateRecord>& states, std::uint64_t count);

struct RecoveryContext {
  const CheckArgs& args;  // the check's; its recording and options
  const crashlab::RecordingIndex& index;
  const crashlab::CrashChecker& checker;
  std::string filesystem;          // ext4, xfs or btrfs, as recorded
  std::filesystem::path out;       // OUT/recovery/N/ for each state
  std::filesystem::path run_dir;   // the servers' run folders go under it
};

// Recovers each of `ordinals` under a recording, checks each recovery's
// recording, and returns results.json's "during_recovery": per state its
// ordinal, crash point, the recovery's crash points, states checked and
// failing, the kernel's agreement, and the totals. Prints one line per
// state; each check's own report goes to OUT/recovery/N/check.log.
Json check_during_recovery(const RecoveryContext& context, const std::vector<std::uint64_t>& ordinals);

}  // namespace nvj::cli
