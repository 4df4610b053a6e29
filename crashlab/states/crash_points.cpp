// SPDX-License-Identifier: BSD-3-Clause
#include "crashlab/states/crash_points.h"

#include <map>
#include <set>

namespace crashlab {

bool marks_only(const RecordingIndex& index) {
  return !index.marks().empty() && index.marks().front().label == kMarksOnlyLabel;
}

std::vector<CrashPoint> crash_points(const RecordingIndex& index, const CrashPointOptions& asked) {
  const auto& changes = index.changes();
  CrashPointOptions options = asked;
  const bool only_marks = marks_only(index);
  if (only_marks) {
    options.persistence = false;
    options.every = 0;
  }
  // Where the points are and why.
  std::map<std::uint64_t, std::uint32_t> at;
  if (options.marks)
    for (std::size_t i = only_marks ? 1 : 0; i < index.marks().size(); ++i) at[index.marks()[i].sequence] |= kAtMark;
  if (options.persistence) {
    for (const IndexedChange& c : changes)
      if (c.durable_on_ack && c.acked != kNever) at[c.acked] |= kAtPersistence;
    for (const IndexedFlush& f : index.flushes())
      if (f.done != kNever) at[f.done] |= kAtPersistence;
  }
  if (options.every > 0)
    for (std::size_t i = options.every - 1; i < changes.size(); i += options.every) at[changes[i].sequence] |= kAtEvery;
  at[index.end()] |= kAtEnd;

  // One sweep in the recording's order: a change joins the volatile set at
  // its frame and leaves it when it becomes durable.
  const std::vector<std::size_t>& durable_order = index.durable_order();
  std::set<std::size_t> volatile_now;
  std::size_t next_change = 0, next_durable = 0, next_mark = 0;
  const auto& marks = index.marks();
  std::vector<CrashPoint> points;
  points.reserve(at.size());
  for (const auto& [sequence, reasons] : at) {
    while (next_change < changes.size() && changes[next_change].sequence <= sequence) volatile_now.insert(next_change++);
    while (next_durable < durable_order.size() && changes[durable_order[next_durable]].durable <= sequence)
      volatile_now.erase(durable_order[next_durable++]);
    while (next_mark < marks.size() && marks[next_mark].sequence <= sequence) ++next_mark;
    CrashPoint p;
    p.sequence = sequence;
    p.reasons = reasons;
    p.last_mark = next_mark == 0 ? kNoMark : next_mark - 1;
    p.changes_before = next_change;
    p.volatile_changes.assign(volatile_now.begin(), volatile_now.end());
    points.push_back(std::move(p));
  }
  return points;
}

}  // namespace crashlab
