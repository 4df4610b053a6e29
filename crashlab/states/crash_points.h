// SPDX-License-Identifier: BSD-3-Clause
// Crash points: the moments of a recording at which the crash lab cuts the
// power, each with the changes that were volatile then. A crash point is
// "right after frame N": every change whose frame comes before it was sent
// to the device; those durable by then (durable_on_ack at their ack, or
// covered by a flush of their export that completed: RecordingIndex) are in
// every crash state of the point, and the others, the volatile changes, may
// or may not be (crashlab/states/crash_states.h says which combinations are tried).
//
// Where: right after every mark (the call that made the mark's fact durable
// has returned), after every persistence point (a flush completing, a change
// acknowledged durable: FUA or a region durable on acknowledgement),
// optionally after every N-th change, and at the end. Pure.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "crashlab/index/recording_index.h"

namespace crashlab {

// Why a point is there (a point can have several reasons).
inline constexpr std::uint32_t kAtMark = 1;
inline constexpr std::uint32_t kAtPersistence = 2;
inline constexpr std::uint32_t kAtEvery = 4;
inline constexpr std::uint32_t kAtEnd = 8;

inline constexpr std::size_t kNoMark = ~std::size_t{0};

// A recording whose first mark has this label has crash points only at its
// marks and its end, whatever the options say: the order of its exports'
// changes between two marks is not known (nvj crash import of two
// dm-log-writes logs, crashlab/record/log_import.h), so no state between marks is
// one the devices could have been left in.
inline constexpr std::string_view kMarksOnlyLabel = "nvj: crash points at marks only";
// Whether `index` is such a recording.
bool marks_only(const RecordingIndex& index);

struct CrashPoint {
  std::uint64_t sequence = 0;   // right after this frame
  std::uint32_t reasons = 0;    // kAt...
  std::size_t last_mark = kNoMark;  // index in marks() of the last mark at or before it
  std::size_t changes_before = 0;   // changes whose frame comes before it
  std::vector<std::size_t> volatile_changes;  // indices in changes(), in the recording's order
};

struct CrashPointOptions {
  bool marks = true;
  bool persistence = true;
  std::uint64_t every = 0;  // also after every N-th change; 0: not
};

std::vector<CrashPoint> crash_points(const RecordingIndex& index, const CrashPointOptions& options);

}  // namespace crashlab
