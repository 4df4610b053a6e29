// SPDX-License-Identifier: BSD-3-Clause
// Fuzz target: a recording as the crash lab reads it (untrusted: a file a
// user hands nvj crash): FrameReader checks every frame, RecordingIndex
// indexes the changes, crash_points and enumerate_crash_states enumerate.
// A recording is either refused with a RecordingError or read whole, and
// then what the index and the points say must hold together. A crash, a
// sanitizer report, a hang, another exception or a broken promise is a
// finding, and aborts.
#include "tests/fuzz/recording_fuzz.h"

#include <cstdio>
#include <cstdlib>
#include <span>

#include "crashlab/states/crash_points.h"
#include "crashlab/states/crash_states.h"
#include "crashlab/index/recording_index.h"

namespace nvj::fuzz::recording {
namespace {

namespace rec = crashlab;

Outcome g_outcome;

void expect(bool ok, const char* what) {
  if (ok) return;
  std::fprintf(stderr, "recording_fuzz: %s\n", what);
  std::abort();
}

void check(const rec::RecordingIndex& index) {
  const auto& changes = index.changes();
  for (std::size_t i = 0; i < changes.size(); ++i) {
    const rec::IndexedChange& c = changes[i];
    expect(i == 0 || changes[i - 1].sequence < c.sequence, "changes out of the recording's order");
    expect(c.device < index.exports().size(), "a change of an export the header does not have");
    expect(c.offset + c.length <= index.exports()[c.device].size, "a change past its export's end");
    expect(c.kind != rec::FrameKind::write || c.data.size() == c.length, "a write whose bytes are not its length");
    expect(c.acked == rec::kNever || c.acked > c.sequence, "acknowledged before it was sent");
    expect(c.durable == rec::kNever || (c.acked != rec::kNever && c.durable >= c.acked), "durable before its ack");
    expect(c.durable == rec::kNever || c.failed == rec::kNever, "a failed change durable");
    expect(c.sequence < index.end(), "a change after the end");
  }
  std::size_t durable = 0;
  for (const rec::IndexedChange& c : changes) durable += c.durable != rec::kNever;
  const auto& order = index.durable_order();
  expect(order.size() == durable, "durable_order misses durable changes");
  for (std::size_t i = 0; i < order.size(); ++i) {
    expect(order[i] < changes.size() && changes[order[i]].durable != rec::kNever, "durable_order holds a volatile change");
    expect(i == 0 || changes[order[i - 1]].durable <= changes[order[i]].durable, "durable_order out of order");
  }
  const auto points = rec::crash_points(index, {true, true, 7});
  expect(!points.empty() && points.back().sequence == index.end(), "no crash point at the end");
  for (std::size_t p = 0; p < points.size(); ++p) {
    expect(p == 0 || points[p - 1].sequence < points[p].sequence, "crash points out of order");
    for (const std::size_t v : points[p].volatile_changes) {
      expect(v < changes.size(), "a volatile change that is not one");
      expect(changes[v].sequence <= points[p].sequence, "a change volatile before it was sent");
      expect(changes[v].durable == rec::kNever || changes[v].durable > points[p].sequence,
             "a change volatile after it became durable");
    }
  }
  rec::StrategyOptions o;
  o.keep = 1;
  o.random = 2;
  o.torn = 2;
  const rec::Enumeration e = rec::enumerate_crash_states(index, points, o, {});
  expect(e.unique <= e.states && e.unique >= 1, "unique states out of bounds");
  g_outcome.states += e.states;
}

}  // namespace

const Outcome& outcome() { return g_outcome; }

}  // namespace nvj::fuzz::recording

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace nvj::fuzz::recording;
  ++g_outcome.inputs;
  try {
    const crashlab::RecordingIndex index(std::span<const std::uint8_t>(data, size));
    ++g_outcome.read;
    check(index);
  } catch (const fscore::record::RecordingError&) {
    ++g_outcome.refused;
  }
  return 0;
}
