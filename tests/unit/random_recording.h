// Recordings for the crash lab's unit tests: one written frame by frame
// (Writer), random ones with changes acknowledged durable or not, out of
// order, flushes and marks (random_recording), and the contents of a crash
// state replayed the slow, obvious way (replay_state) to compare with.
#pragma once

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "crashlab/crash_points.h"
#include "crashlab/crash_states.h"
#include "fscore/record/frame_encoder.h"
#include "crashlab/recording_index.h"
#include "fscore/record/replayed_exports.h"

namespace recording_tests {

using Bytes = std::vector<std::uint8_t>;
using namespace fscore::record;
using namespace crashlab;

inline Bytes copy(const FrameBuffer& b) { return Bytes(b.data(), b.data() + b.size()); }

// A recording written frame by frame; ids and the export are given.
struct Writer {
  FrameEncoder e;
  FrameBuffer out;
  explicit Writer(std::uint64_t size = 1 << 20) { e.header(out, {{"data", size}, {"journal", size}}); }
  std::uint64_t next() const { return e.frames(); }  // the next frame's sequence
  void write(std::uint8_t dev, std::uint64_t id, std::uint64_t offset, std::size_t n, std::uint8_t fill) {
    const Bytes data(n, fill);
    e.write(out, dev, id, offset, data.data(), static_cast<std::uint32_t>(n), false);
  }
  Bytes finish() {
    e.end(out);
    return copy(out);
  }
};

// Two exports of `sectors` 512-byte sectors, a base on the first, random
// writes (few distinct bytes, so that states repeat), zeroes and trims,
// acknowledged in any order, a third durable on acknowledgement (a later
// change can be durable before an earlier one), flushes and marks. With
// `unit` below 512, changes are off sectors by multiples of it.
inline Bytes random_recording(std::mt19937_64& rng, std::uint64_t sectors = 16, std::uint64_t unit = 512) {
  const std::uint64_t size = sectors * 512;
  Writer w(size);
  w.e.base(w.out, 0, 0, Bytes(2048, 0x5A).data(), 2048);
  std::uint64_t id = 0;
  std::vector<std::uint64_t> unacked[2];
  for (int step = 0; step < 24; ++step) {
    const auto dev = static_cast<std::uint8_t>(rng() % 2);
    const std::uint64_t units = size / unit;
    const std::uint64_t n = (1 + rng() % 3) * (512 / unit == 1 ? 1 : 1 + rng() % (512 / unit));
    const std::uint64_t at = rng() % (units - std::min(units - 1, n));
    const std::uint64_t offset = at * unit, length = std::min(n * unit, size - offset);
    const unsigned what = static_cast<unsigned>(rng() % 20);
    if (what < 9) {
      w.write(dev, ++id, offset, length, static_cast<std::uint8_t>(rng() % 3));
      unacked[dev].push_back(id);
    } else if (what < 10) {
      w.e.zero(w.out, dev, ++id, offset, static_cast<std::uint32_t>(length), false);
      unacked[dev].push_back(id);
    } else if (what < 11) {
      w.e.trim(w.out, dev, ++id, offset, static_cast<std::uint32_t>(length), false);
      unacked[dev].push_back(id);
    } else if (what < 17 && !unacked[dev].empty()) {
      const std::size_t i = rng() % unacked[dev].size();
      w.e.ack(w.out, dev, unacked[dev][i], rng() % 3 == 0);
      unacked[dev].erase(unacked[dev].begin() + static_cast<std::ptrdiff_t>(i));
    } else if (what >= 17) {
      w.e.flush(w.out, dev, ++id);
      w.e.flush_done(w.out, dev, id);
    }
    if (rng() % 4 == 0) w.e.mark(w.out, 0, "m");
  }
  return w.finish();
}

// What the exports hold in state `s` at `point`: the base, then in the
// recording's order each change durable at the point or kept, and the torn
// one's first bytes.
inline ReplayedExports replay_state(const RecordingIndex& index, const CrashPoint& point, const CrashState& s) {
  ReplayedExports r(index.exports());
  for (const IndexedBase& b : index.bases()) {
    Frame f;
    f.kind = FrameKind::base;
    f.device = b.device;
    f.offset = b.offset;
    f.length = b.data.size();
    f.data = b.data;
    r.apply(f);
  }
  for (std::size_t i = 0; i < index.changes().size(); ++i) {
    const IndexedChange& c = index.changes()[i];
    const bool kept = std::find(s.kept.begin(), s.kept.end(), i) != s.kept.end();
    const bool torn = s.torn && s.torn->change == i && c.durable > point.sequence;
    if (c.sequence > point.sequence || !(kept || torn || c.durable <= point.sequence)) continue;
    Frame f;
    f.kind = c.kind;
    f.device = c.device;
    f.offset = c.offset;
    f.length = torn ? s.torn->bytes : c.length;
    f.data = torn ? c.data.subspan(0, s.torn->bytes) : c.data;
    r.apply(f);
  }
  return r;
}

}  // namespace recording_tests
