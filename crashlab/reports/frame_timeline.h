// SPDX-License-Identifier: BSD-3-Clause
// What the devices saw around a crash point, in the recording's order, as
// replay-log lists a dm-log-writes log: every write, zero and trim with its
// flags, its acknowledgement (and whether durable then), every flush and
// its completion (how many changes it made durable), every mark; and for a
// crash state, what became of each change sent before the power went:
// durable by then, volatile and kept, volatile and dropped, kept in part
// (torn); the changes sent after it are in no state of that point. The
// meanings of the blocks are crashlab/reports/block_meaning.h's. Pure.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "crashlab/states/crash_points.h"
#include "crashlab/states/crash_states.h"
#include "crashlab/index/recording_index.h"

namespace crashlab {

// What became of a change in the state (or at the point).
enum class InState : std::uint8_t {
  none,      // a frame that is no change (an ack, a flush, a mark)
  durable,   // durable before the power went: in every state of the point
  kept,      // volatile, kept by the state
  dropped,   // volatile, dropped by the state
  torn,      // volatile, kept in part (its first `torn_bytes`)
  volatile_, // volatile (a point listed without a state)
  after,     // sent after the crash point: in none of its states
};
const char* to_string(InState s);

struct TimelineFrame {
  std::uint64_t sequence = 0;
  FrameKind kind = FrameKind::write;  // write, zero, trim, ack, failed, flush, flush_done, mark
  std::optional<std::uint8_t> device;  // none for a mark
  std::uint64_t id = 0;               // the change's or the flush's
  std::size_t change = 0;             // write, zero, trim, ack, failed: index in changes()
  std::uint64_t change_frame = 0;     // ack, failed: the change's frame
  std::uint64_t offset = 0, length = 0;
  bool fua = false;                   // a change sent with FUA
  bool durable = false;               // an ack: durable on acknowledgement
  std::uint64_t made_durable = 0;     // a flush_done: the changes it made durable
  std::string label;                  // a mark
  InState in_state = InState::none;
  std::uint64_t torn_bytes = 0;
};

struct TimelineWindow {
  std::uint64_t before = 20;  // frames before the first volatile change (or the point)
  std::uint64_t after = 10;   // frames after the point
  bool all = false;           // every frame of the recording
};

struct Timeline {
  std::uint64_t first = 0, last = 0;  // the frames listed, inclusive
  std::uint64_t point = 0;            // the crash point's: right after this frame
  std::vector<TimelineFrame> frames;  // by sequence; bases, pads and the header and end are left out
};

// The frames around `point`: from `before` frames ahead of the oldest of
// its volatile changes (or of the point, when it has none) to `after`
// frames past it, each change's fate in `state` (a state of that point) or,
// with none, at the point.
Timeline frame_timeline(const RecordingIndex& index, const CrashPoint& point, const CrashState* state,
                        const TimelineWindow& window);

}  // namespace crashlab
