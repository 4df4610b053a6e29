// SPDX-License-Identifier: BSD-3-Clause
// nvj crash frames' timeline (crashlab/reports/frame_timeline.h) on random
// recordings: every frame of the window listed once, in order; each
// change's fate what the crash state is made of (the model of when each
// change became durable kept apart from the index's own reading, the
// state's kept and torn changes); flush completions counting the changes
// the model says they made durable. The blocks' meanings against a real
// filesystem are the kernel test crash_frames'.
#include <catch2/catch.hpp>

#include <map>
#include <random>
#include <set>
#include <vector>

#include "crashlab/reports/frame_timeline.h"
#include "tests/unit/random_recording.h"

namespace frame_timeline_test {

using namespace crashlab;
using namespace recording_tests;

TEST_CASE("a timeline lists every frame of its window once, each change's fate as its state makes it", "[crash]") {
  std::mt19937_64 rng(36);
  std::uint64_t checked_states = 0, dropped = 0, kept = 0, torn = 0;
  for (int round = 0; round < 40; ++round) {
    const RandomRecording rec = random_recording_with_model(rng);
    const RecordingIndex index(rec.bytes);
    const auto points = crash_points(index, {});
    StrategyOptions options;
    options.torn = 2;
    std::vector<CrashState> states;
    enumerate_crash_states(index, points, options, [&](const CrashState& s) {
      if (states.size() < 200) states.push_back(s);
    });
    for (const CrashState& s : states) {
      const CrashPoint& p = points[s.point];
      const Timeline t = frame_timeline(index, p, &s, {3, 2, false});
      CAPTURE(round, s.point, to_string(s.strategy));
      REQUIRE(t.point == p.sequence);
      // Every volatile change of the point is in the window.
      std::uint64_t oldest = p.sequence;
      for (const std::size_t v : p.volatile_changes) {
        CHECK(index.changes()[v].sequence >= t.first);
        oldest = std::min(oldest, index.changes()[v].sequence);
      }
      // No more than --before frames before the oldest of them.
      CHECK(t.first == (oldest > 3 ? oldest - 3 : 1));
      CHECK(t.last == std::min(index.end(), p.sequence + 2));
      std::set<std::uint64_t> changes_listed;
      std::uint64_t previous = 0;
      for (const TimelineFrame& f : t.frames) {
        CHECK(f.sequence >= t.first);
        CHECK(f.sequence <= t.last);
        CHECK(f.sequence > previous);  // once each, in order
        previous = f.sequence;
        if (f.kind != FrameKind::write && f.kind != FrameKind::zero && f.kind != FrameKind::trim) continue;
        const IndexedChange& c = index.changes()[f.change];
        changes_listed.insert(f.change);
        const std::uint64_t durable = rec.durable_at.count(c.id) != 0 ? rec.durable_at.at(c.id) : kNever;
        const bool in_kept = std::find(s.kept.begin(), s.kept.end(), f.change) != s.kept.end();
        const bool is_torn = s.torn && s.torn->change == f.change;
        InState want = InState::dropped;
        if (c.sequence > p.sequence) want = InState::after;
        else if (durable <= p.sequence) want = InState::durable;
        else if (in_kept) want = InState::kept;
        else if (is_torn) want = InState::torn;
        CHECK(to_string(f.in_state) == std::string(to_string(want)));
        if (is_torn) CHECK(f.torn_bytes == s.torn->bytes);
        dropped += want == InState::dropped;
        kept += want == InState::kept;
        torn += want == InState::torn;
      }
      // Every change sent in the window is listed.
      for (std::size_t i = 0; i < index.changes().size(); ++i)
        if (index.changes()[i].sequence >= t.first && index.changes()[i].sequence <= t.last)
          CHECK(changes_listed.count(i) == 1);
      ++checked_states;
    }
    // Without a state, the point's volatile changes are "volatile"; with
    // --all, the whole recording, and each flush completion counts the
    // changes it made durable.
    const Timeline whole = frame_timeline(index, points.back(), nullptr, {0, 0, true});
    CHECK(whole.first == 1);
    CHECK(whole.last == index.end());
    std::map<std::uint64_t, std::uint64_t> made_durable;
    for (const IndexedChange& c : index.changes())
      if (!c.durable_on_ack && rec.durable_at.count(c.id) != 0) ++made_durable[rec.durable_at.at(c.id)];
    for (const TimelineFrame& f : whole.frames) {
      if (f.kind == FrameKind::flush_done) CHECK(f.made_durable == made_durable[f.sequence]);
      if (f.kind == FrameKind::write || f.kind == FrameKind::zero || f.kind == FrameKind::trim) {
        const bool is_volatile = std::count(points.back().volatile_changes.begin(), points.back().volatile_changes.end(),
                                            f.change) != 0;
        CHECK((f.in_state == InState::volatile_) == is_volatile);
      }
    }
  }
  CHECK(checked_states > 1000);
  CHECK(dropped > 100);
  CHECK(kept > 100);
  CHECK(torn > 10);
}

}  // namespace frame_timeline_test
