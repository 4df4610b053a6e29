// SPDX-License-Identifier: BSD-3-Clause
// The cause of a failing crash state, minimized: the smallest set of its
// dropped writes (the volatile changes it did not keep) that still breaks a
// fact when only they are dropped, found by delta debugging (ddmin: halves,
// then complements, then finer) with the fast path as the test (or, for a
// filesystem the fast path does not read, a judge the caller gives: the
// kernel's mount and checker). A state
// that fails with every volatile change kept has no such set: its cause is
// not a lost write (a fact the workload made too early, or damage the
// writes themselves carry). A torn state's torn write stays torn in every
// try: the cause is the dropped writes with that tear, or the tear alone
// (found, nothing dropped) when it breaks the state with every other
// volatile change kept and keeping that write whole mends it (else, as
// above, no lost or torn write is the cause). Each change of the cause is
// put in a region (with a judge, journal or other only: the filesystem is
// not read):
//   journal     the journal export, or the internal journal's blocks;
//   checkpoint  a block the journal logged, written home (the state's
//               journal replay writes it);
//   data        the blocks of a file whose fact broke (ordered data, or an
//               overwrite in place);
//   other       anything else (bitmaps, inodes, directories outside the
//               journal).
// Pure.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "crashlab/states/crash_image.h"
#include "crashlab/states/crash_points.h"
#include "crashlab/states/crash_states.h"
#include "crashlab/facts/fact_checker.h"
#include "crashlab/judge/fast_path.h"

namespace crashlab {

enum class Region : std::uint8_t { journal, checkpoint, data, other };
const char* to_string(Region region);

struct CrashCause {
  bool found = false;                 // some set of dropped writes breaks it
  std::vector<std::size_t> dropped;   // indices in changes(), in the recording's order
  std::vector<Region> regions;        // of each
  std::uint64_t checks = 0;           // fast-path checks spent
  bool minimal = true;                // false: the budget ran out first (a smaller set may exist)
  bool torn = false;                  // the state's torn write, torn, is part of it
  Region torn_region = Region::other;  // of that write
};

// The volatile changes a try keeps whole: all of the point's but `dropped`
// and the state's torn write (sorted, as `dropped` must be).
std::vector<std::size_t> kept_without(const CrashPoint& point, const CrashState& state,
                                      const std::vector<std::size_t>& dropped);

struct CauseInputs {
  const RecordingIndex& index;
  CrashImage& image;  // advanced to the point
  std::uint8_t data = 0;
  std::optional<std::uint8_t> journal;
  const FactChecker& oracle;
  FastPathMemo* memo = nullptr;
  std::uint32_t now = 0;
  fscore::jbd2::RecoveryRules recovery;
  // The test of each try, on the state `image` holds: the ext4 fast path
  // when empty.
  std::function<StateVerdict()> judge;
};

// `state` failed at `point`. At most `budget` checks (tries of the fast path
// or the judge). Leaves `image` holding
// the state with every volatile change kept (set_state again to reuse it).
CrashCause minimize_cause(const CauseInputs& in, const CrashPoint& point, const CrashState& state,
                          std::uint64_t budget = 400);

}  // namespace crashlab
