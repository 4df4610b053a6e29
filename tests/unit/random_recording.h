// SPDX-License-Identifier: BSD-3-Clause
// Recordings for the crash lab's unit tests: one written frame by frame
// (Writer), random ones with changes acknowledged durable or not, out of
// order, flushes and marks (random_recording), and the contents of a crash
// state replayed the slow, obvious way (replay_state) to compare with.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <random>
#include <vector>

#include "crashlab/states/crash_points.h"
#include "crashlab/states/crash_states.h"
#include "fscore/record/frame_encoder.h"
#include "crashlab/index/recording_index.h"
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

// A random recording and, worked out as it was written, when each change
// became durable: the model the index is checked against, kept apart from
// the index's own reading (a change durable at its ack when the ack says
// so, else at the completion of the first flush of its export that arrived
// after its ack; kNever if none did).
struct RandomRecording {
  Bytes bytes;
  std::map<std::uint64_t, std::uint64_t> durable_at;  // change id -> frame
};

// Two exports of `sectors` 512-byte sectors, a base on the first, random
// writes (few distinct bytes, so that states repeat), zeroes and trims,
// acknowledged in any order, a third durable on acknowledgement (a later
// change can be durable before an earlier one), flushes that stay pending
// while other changes are acknowledged (those are not theirs) and complete
// in any order, and marks. With `unit` below 512, changes are off sectors
// by multiples of it.
inline RandomRecording random_recording_with_model(std::mt19937_64& rng, std::uint64_t sectors = 16,
                                                   std::uint64_t unit = 512) {
  const std::uint64_t size = sectors * 512;
  Writer w(size);
  RandomRecording out;
  w.e.base(w.out, 0, 0, Bytes(2048, 0x5A).data(), 2048);
  std::uint64_t id = 0;
  std::vector<std::uint64_t> unacked[2];
  std::vector<std::uint64_t> acked_volatile[2];  // acknowledged, not durable yet
  struct Pending {
    std::uint64_t id;
    std::vector<std::uint64_t> covers;  // what was acknowledged volatile when it arrived
  };
  std::vector<Pending> pending[2];
  const auto complete = [&](std::uint8_t dev, std::size_t which) {
    const Pending p = pending[dev][which];
    pending[dev].erase(pending[dev].begin() + static_cast<std::ptrdiff_t>(which));
    const std::uint64_t at = w.next();
    w.e.flush_done(w.out, dev, p.id);
    for (const std::uint64_t c : p.covers)
      if (out.durable_at[c] == kNever) out.durable_at[c] = at;
  };
  for (int step = 0; step < 24; ++step) {
    const auto dev = static_cast<std::uint8_t>(rng() % 2);
    const std::uint64_t units = size / unit;
    const std::uint64_t n = (1 + rng() % 3) * (512 / unit == 1 ? 1 : 1 + rng() % (512 / unit));
    const std::uint64_t at = rng() % (units - std::min(units - 1, n));
    const std::uint64_t offset = at * unit, length = std::min(n * unit, size - offset);
    const unsigned what = static_cast<unsigned>(rng() % 22);
    if (what < 9) {
      w.write(dev, ++id, offset, length, static_cast<std::uint8_t>(rng() % 3));
      unacked[dev].push_back(id);
      out.durable_at[id] = kNever;
    } else if (what < 10) {
      w.e.zero(w.out, dev, ++id, offset, static_cast<std::uint32_t>(length), false);
      unacked[dev].push_back(id);
      out.durable_at[id] = kNever;
    } else if (what < 11) {
      w.e.trim(w.out, dev, ++id, offset, static_cast<std::uint32_t>(length), false);
      unacked[dev].push_back(id);
      out.durable_at[id] = kNever;
    } else if (what < 17 && !unacked[dev].empty()) {
      const std::size_t i = rng() % unacked[dev].size();
      const std::uint64_t c = unacked[dev][i];
      const bool durable = rng() % 3 == 0;
      const std::uint64_t ack_at = w.next();
      w.e.ack(w.out, dev, c, durable);
      unacked[dev].erase(unacked[dev].begin() + static_cast<std::ptrdiff_t>(i));
      if (durable)
        out.durable_at[c] = ack_at;
      else
        acked_volatile[dev].push_back(c);
    } else if (what < 20) {  // a flush arrives: it covers what is acknowledged now
      w.e.flush(w.out, dev, ++id);
      pending[dev].push_back({id, acked_volatile[dev]});
    } else if (!pending[dev].empty()) {  // one of the pending flushes completes
      complete(dev, rng() % pending[dev].size());
    }
    if (rng() % 4 == 0) w.e.mark(w.out, 0, "m");
  }
  for (std::uint8_t dev = 0; dev < 2; ++dev)  // some are left pending at the end: they never completed
    while (pending[dev].size() > 1) complete(dev, 0);
  out.bytes = w.finish();
  return out;
}

inline Bytes random_recording(std::mt19937_64& rng, std::uint64_t sectors = 16, std::uint64_t unit = 512) {
  return random_recording_with_model(rng, sectors, unit).bytes;
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
