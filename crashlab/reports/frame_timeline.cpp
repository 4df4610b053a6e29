// SPDX-License-Identifier: BSD-3-Clause
#include "crashlab/reports/frame_timeline.h"

#include <algorithm>
#include <limits>
#include <map>
#include <set>

namespace crashlab {

const char* to_string(InState s) {
  switch (s) {
    case InState::none: return "";
    case InState::durable: return "durable";
    case InState::kept: return "kept";
    case InState::dropped: return "dropped";
    case InState::torn: return "torn";
    case InState::volatile_: return "volatile";
    case InState::after: return "after";
  }
  return "";
}

namespace {

// Whether `t` lists the frame `s`: one that happened (not kNever), from its first to its last.
bool in_window(const Timeline& t, std::uint64_t s) { return s != kNever && s >= t.first && s <= t.last; }

// Change `i`'s own frame (a write, zero or trim), with what became of it in
// `state` (whose kept changes are `kept`) or, with none, at `point`.
TimelineFrame frame_of_change(const IndexedChange& c, std::size_t i, const CrashPoint& point, const CrashState* state,
                              const std::set<std::size_t>& kept) {
  TimelineFrame f;
  f.sequence = c.sequence;
  f.kind = c.kind;
  f.device = c.device;
  f.id = c.id;
  f.change = i;
  f.offset = c.offset;
  f.length = c.length;
  f.fua = c.fua;
  if (c.sequence > point.sequence)
    f.in_state = InState::after;
  else if (c.durable <= point.sequence)
    f.in_state = InState::durable;
  else if (!state)
    f.in_state = InState::volatile_;
  else if (kept.count(i) != 0)
    f.in_state = InState::kept;
  else if (state->torn && state->torn->change == i) {
    f.in_state = InState::torn;
    f.torn_bytes = state->torn->bytes;
  } else
    f.in_state = InState::dropped;
  return f;
}

// Each flush and its completion that `t` lists, the completion with the
// changes it made durable.
void add_flush_frames(const RecordingIndex& index, Timeline& t) {
  std::map<std::uint64_t, std::uint64_t> durable_at;  // a frame -> the changes that became durable there
  for (const IndexedChange& c : index.changes())
    if (!c.durable_on_ack && c.durable != kNever) ++durable_at[c.durable];
  for (const IndexedFlush& fl : index.flushes())
    for (const auto& [at, kind] : {std::pair{fl.sequence, FrameKind::flush}, std::pair{fl.done, FrameKind::flush_done}}) {
      if (!in_window(t, at)) continue;
      TimelineFrame f;
      f.sequence = at;
      f.kind = kind;
      f.device = fl.device;
      f.id = fl.id;
      if (kind == FrameKind::flush_done)
        if (const auto it = durable_at.find(at); it != durable_at.end()) f.made_durable = it->second;
      t.frames.push_back(f);
    }
}

}  // namespace

Timeline frame_timeline(const RecordingIndex& index, const CrashPoint& point, const CrashState* state,
                        const TimelineWindow& window) {
  Timeline t;
  t.point = point.sequence;
  std::uint64_t oldest = point.sequence;
  for (const std::size_t v : point.volatile_changes) oldest = std::min(oldest, index.changes()[v].sequence);
  t.first = window.all ? 1 : (oldest > window.before ? oldest - window.before : 1);
  const std::uint64_t after = std::min(window.after, std::numeric_limits<std::uint64_t>::max() - point.sequence);
  t.last = window.all ? index.end() : std::min(index.end(), point.sequence + after);

  const std::set<std::size_t> kept = state ? std::set<std::size_t>(state->kept.begin(), state->kept.end())
                                           : std::set<std::size_t>{};
  for (std::size_t i = 0; i < index.changes().size(); ++i) {
    const IndexedChange& c = index.changes()[i];
    if (in_window(t, c.sequence)) t.frames.push_back(frame_of_change(c, i, point, state, kept));
    for (const auto& [at, kind] : {std::pair{c.acked, FrameKind::ack}, std::pair{c.failed, FrameKind::failed}}) {
      if (!in_window(t, at)) continue;
      TimelineFrame f;
      f.sequence = at;
      f.kind = kind;
      f.device = c.device;
      f.id = c.id;
      f.change = i;
      f.change_frame = c.sequence;
      f.durable = kind == FrameKind::ack && c.durable_on_ack;
      t.frames.push_back(f);
    }
  }
  add_flush_frames(index, t);
  for (const IndexedMark& m : index.marks()) {
    if (!in_window(t, m.sequence)) continue;
    TimelineFrame f;
    f.sequence = m.sequence;
    f.kind = FrameKind::mark;
    f.label = m.label;
    t.frames.push_back(f);
  }
  std::sort(t.frames.begin(), t.frames.end(),
            [](const TimelineFrame& a, const TimelineFrame& b) { return a.sequence < b.sequence; });
  return t;
}

}  // namespace crashlab
