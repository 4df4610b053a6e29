// SPDX-License-Identifier: BSD-3-Clause
// The crash lab's enumeration (crashlab/): a recording's index (when
// each change was acknowledged and became durable), its crash points with
// the changes volatile at each, and the crash states tried per strategy.
// The merging of states by fingerprint is checked against the contents
// themselves: over random recordings, two states get the same fingerprint
// exactly when replaying them gives the same bytes.
#include <catch2/catch.hpp>

#include <cstdint>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "fscore/crc32c.h"
#include "crashlab/states/crash_points.h"
#include "crashlab/states/crash_states.h"
#include "crashlab/states/state_prints.h"
#include "fscore/record/frame_encoder.h"
#include "crashlab/index/recording_index.h"
#include "fscore/record/replayed_exports.h"
#include "tests/unit/random_recording.h"

namespace crash_states_test {

using namespace fscore::record;
using namespace crashlab;

namespace {

using namespace recording_tests;

std::vector<std::uint64_t> ids(const RecordingIndex& index, const std::vector<std::size_t>& changes) {
  std::vector<std::uint64_t> out;
  for (const std::size_t c : changes) out.push_back(index.changes()[c].id);
  return out;
}

}  // namespace

TEST_CASE("the index knows when each change was acknowledged and became durable", "[crash]") {
  Writer w;
  w.write(0, 1, 0, 4096, 'a');  // seq 1
  w.e.ack(w.out, 0, 1, false);  // 2: volatile until a flush
  w.write(1, 2, 0, 512, 'j');   // 3
  w.e.ack(w.out, 1, 2, true);   // 4: durable on ack (NVRAM)
  w.e.flush(w.out, 0, 3);       // 5: covers change 1
  w.write(0, 4, 8192, 512, 'b');  // 6
  w.e.ack(w.out, 0, 4, false);    // 7: after the flush: not covered
  w.e.flush_done(w.out, 0, 3);    // 8
  w.write(0, 5, 0, 512, 'c');     // 9: never acknowledged
  w.e.mark(w.out, 1, "fact entry . x");  // 10
  const Bytes bytes = w.finish();  // end: 11
  const RecordingIndex index(bytes);
  REQUIRE(index.changes().size() == 4);
  const auto& c = index.changes();
  CHECK((c[0].id == 1 && c[0].acked == 2 && !c[0].durable_on_ack && c[0].durable == 8));
  CHECK((c[1].id == 2 && c[1].durable_on_ack && c[1].durable == 4));
  CHECK((c[2].id == 4 && c[2].acked == 7 && c[2].durable == kNever));
  CHECK((c[3].id == 5 && c[3].acked == kNever && c[3].durable == kNever));
  CHECK(index.durable_order() == std::vector<std::size_t>{1, 0});  // change 2 at its ack (4), change 1 at the flush (8)
  REQUIRE(index.flushes().size() == 1);
  CHECK(index.flushes()[0].done == 8);
  REQUIRE(index.marks().size() == 1);
  CHECK(index.marks()[0].sequence == 10);
  CHECK(index.end() == 11);

  const auto points = crash_points(index, {});
  std::vector<std::uint64_t> at;
  for (const CrashPoint& p : points) at.push_back(p.sequence);
  CHECK(at == std::vector<std::uint64_t>{4, 8, 10, 11});  // durable ack, flush done, mark, end
  CHECK(points[0].reasons == kAtPersistence);
  CHECK(ids(index, points[0].volatile_changes) == std::vector<std::uint64_t>{1});
  CHECK(ids(index, points[1].volatile_changes) == std::vector<std::uint64_t>{4});
  CHECK(ids(index, points[2].volatile_changes) == std::vector<std::uint64_t>{4, 5});
  CHECK(points[2].reasons == kAtMark);
  CHECK(points[2].last_mark == 0);
  CHECK(points[1].last_mark == kNoMark);
  CHECK(points[3].reasons == kAtEnd);
  const auto every = crash_points(index, {false, false, 2});
  REQUIRE(every.size() == 3);  // after the 2nd and the 4th change, and the end
  CHECK((every[0].sequence == 3 && every[1].sequence == 9 && every[2].sequence == 11));
  CHECK(every[0].reasons == kAtEvery);
}

TEST_CASE("when each change became durable agrees with a model of the flushes kept apart, pending ones too", "[crash]") {
  // random_recording_with_model works the durability out as it writes
  // frames; flushes there stay pending while changes are acknowledged and
  // complete in any order. The index's `durable`, and every crash point's
  // volatile set, must be the model's.
  std::mt19937_64 rng(20261125);
  std::uint64_t acked_while_pending = 0, compared = 0;
  for (int round = 0; round < 200; ++round) {
    const RandomRecording r = random_recording_with_model(rng);
    const RecordingIndex index(r.bytes);
    REQUIRE(index.changes().size() == r.durable_at.size());
    for (const IndexedChange& c : index.changes()) {
      CAPTURE(round, c.id);
      CHECK(c.durable == r.durable_at.at(c.id));
      ++compared;
    }
    // Acknowledged while a flush of its export was pending, and not made
    // durable by it: the case a flush completed at once never makes.
    for (const IndexedChange& c : index.changes())
      for (const IndexedFlush& f : index.flushes())
        if (f.device == c.device && c.acked != kNever && !c.durable_on_ack && f.sequence < c.acked &&
            c.acked < f.done && c.durable != f.done)
          ++acked_while_pending;
    for (const CrashPoint& p : crash_points(index, {true, true, 1})) {
      std::vector<std::size_t> expected;
      for (std::size_t i = 0; i < index.changes().size(); ++i) {
        const IndexedChange& c = index.changes()[i];
        if (c.sequence <= p.sequence && r.durable_at.at(c.id) > p.sequence) expected.push_back(i);
      }
      CHECK(p.volatile_changes == expected);
    }
  }
  CHECK(compared > 1000);
  CHECK(acked_while_pending > 50);
}

TEST_CASE("an index refuses acknowledgements of changes it never saw", "[crash]") {
  Writer w;
  w.write(0, 1, 0, 512, 'a');
  w.e.ack(w.out, 0, 7, false);
  const Bytes bytes = w.finish();
  CHECK_THROWS_WITH(RecordingIndex(bytes), Catch::Contains("ack of change 7, which no earlier frame"));
  Writer twice;
  twice.write(0, 1, 0, 512, 'a');
  twice.e.ack(twice.out, 0, 1, false);
  twice.e.failed(twice.out, 0, 1);
  const Bytes b2 = twice.finish();
  CHECK_THROWS_WITH(RecordingIndex(b2), Catch::Contains("change 1 ends twice"));
}

TEST_CASE("each strategy tries its subsets, and states with the same contents are tried once", "[crash]") {
  Writer w;
  w.write(0, 1, 0, 512, 'a');
  w.write(0, 2, 512, 512, 'b');
  w.write(0, 3, 1024, 512, 'a');
  w.write(0, 4, 0, 512, 'a');  // the same bytes as change 1 where it lands
  w.e.mark(w.out, 1, "four in flight");
  const Bytes bytes = w.finish();
  const RecordingIndex index(bytes);
  const auto points = crash_points(index, {true, false, 0});
  REQUIRE(points.size() == 2);  // the mark and the end: the same four volatile changes
  StrategyOptions o;
  o.random = 3;
  std::vector<CrashState> states;
  const Enumeration e = enumerate_crash_states(index, points, o, [&](const CrashState& s) { states.push_back(s); });
  const auto count = [&](Strategy s) { return e.by_strategy[static_cast<std::size_t>(s)]; };
  // Per point: none 1, all 1, keep1 4, keep2 6, prefix 3, random 3.
  CHECK(count(Strategy::none).states == 2);
  CHECK(count(Strategy::keep1).states == 8);
  CHECK(count(Strategy::keep2).states == 12);
  CHECK(count(Strategy::prefix).states == 6);
  CHECK(count(Strategy::random).states == 6);
  CHECK(e.states == 36);
  CHECK(e.fingerprints);
  // Distinct contents: sector 0 (a or not), 512 (b or not), 1024 (a or not):
  // 8 at most, all of them reachable with pairs.
  CHECK(e.unique == 8);
  CHECK(count(Strategy::keep1).unique == 3);  // changes 1 and 4 give the same contents
  std::size_t first = 0;
  for (const CrashState& s : states) first += s.first;
  CHECK(first == 8);
}

TEST_CASE("after a mark, contents tried before it are a new state: the mark may bring a fact", "[crash]") {
  Writer w;
  w.write(0, 1, 0, 512, 'a');
  w.e.ack(w.out, 0, 1, false);             // volatile
  w.e.mark(w.out, 1, "fact entry . x");    // the same volatile write at both marks
  w.e.mark(w.out, 1, "fact entry . y");
  const Bytes bytes = w.finish();
  const RecordingIndex index(bytes);
  const auto points = crash_points(index, {true, false, 0});
  REQUIRE(points.size() == 3);  // two marks and the end (after the second mark: no new one)
  StrategyOptions o;
  std::vector<CrashState> states;
  const Enumeration e = enumerate_crash_states(index, points, o, [&](const CrashState& s) { states.push_back(s); });
  // Per point: none (the write dropped), all and keep1 (kept: the same
  // contents), the same two contents at every point; new after each mark,
  // merged at the end, which has no mark of its own.
  REQUIRE(states.size() == 9);
  CHECK(e.unique == 4);
  std::vector<bool> first;
  for (const CrashState& s : states) first.push_back(s.first);
  CHECK(first == std::vector<bool>{true, true, false, true, true, false, false, false, false});
  CHECK(states[0].fingerprint == states[3].fingerprint);
}

TEST_CASE("torn writes are cut at the atomic units' boundaries inside them, spread evenly", "[crash]") {
  CHECK(torn_cuts(0, 2048, 512, 1) == std::vector<std::uint64_t>{1024});  // of 512, 1024, 1536: the middle
  CHECK(torn_cuts(0, 2048, 512, 2) == std::vector<std::uint64_t>{512, 1024});
  CHECK(torn_cuts(0, 2048, 512, 3) == std::vector<std::uint64_t>{512, 1024, 1536});
  CHECK(torn_cuts(0, 2048, 512, 9) == std::vector<std::uint64_t>{512, 1024, 1536});  // no more than there are
  CHECK(torn_cuts(512, 2048, 1024, 5) == std::vector<std::uint64_t>{512, 1536});  // the device's boundaries, 1024 and 2048
  CHECK(torn_cuts(0, 512, 512, 4).empty());   // one unit: it cannot tear
  CHECK(torn_cuts(0, 4096, 4096, 4).empty());
  CHECK(torn_cuts(100, 1000, 512, 4) == std::vector<std::uint64_t>{412, 924});  // off sectors: at 512 and 1024
  CHECK(torn_cuts(0, 2048, 512, 0).empty());

  // Three volatile writes: the first of 4 sectors, then one of 1, then one
  // of 2. Each that can tear does, the ones before it kept whole.
  Writer w;
  w.write(0, 1, 0, 2048, 'a');
  w.write(0, 2, 4096, 512, 'b');
  w.write(0, 3, 8192, 1024, 'c');
  w.e.mark(w.out, 1, "m");
  const Bytes bytes = w.finish();
  const RecordingIndex index(bytes);
  const auto points = crash_points(index, {true, false, 0});
  REQUIRE(points.size() == 2);
  StrategyOptions o;
  o.none = o.all = o.prefix = false;
  o.keep = 0;
  o.torn = 2;
  std::vector<CrashState> states;
  const Enumeration e = enumerate_crash_states(index, points, o, [&](const CrashState& s) { states.push_back(s); });
  CHECK(e.by_strategy[static_cast<std::size_t>(Strategy::torn)].states == 6);  // per point: 2 of the first, 1 of the last
  REQUIRE(states.size() == 6);
  CHECK((states[0].kept.empty() && states[0].torn->change == 0 && states[0].torn->bytes == 512));
  CHECK((states[1].kept.empty() && states[1].torn->change == 0 && states[1].torn->bytes == 1024));
  CHECK((states[2].kept == std::vector<std::size_t>{0, 1} && states[2].torn->change == 2 && states[2].torn->bytes == 512));
  CHECK(e.unique == 3);  // the end point's states are the mark's
  o.torn_unit = 1000;
  CHECK_THROWS_WITH(enumerate_crash_states(index, points, o, {}), Catch::Contains("multiple of 512"));
}

TEST_CASE("states merge exactly when an earlier state of their window has their contents, whatever the fingerprints", "[crash]") {
  // Random recordings (random_recording.h): every state is replayed and its
  // bytes compared with those of the states before it since the last mark.
  // With whole fingerprints, each equals one made from the bytes; cut to 3
  // bits, they collide all the time, and the states merged are still
  // exactly those with equal bytes.
  for (const unsigned bits : {64u, 3u}) {
    std::mt19937_64 rng(20261123);
    std::size_t compared = 0;
    std::uint64_t collisions = 0;
    for (int round = 0; round < 40; ++round) {
      const Bytes bytes = random_recording(rng);
      const RecordingIndex index(bytes);
      const auto points = crash_points(index, {true, true, 3});
      StrategyOptions o;
      o.random = 4;
      o.seed = static_cast<std::uint64_t>(round);
      o.torn = 3;
      o.fingerprint_bits = bits;
      std::set<Bytes> since_mark;  // the contents of the window's states
      std::size_t mark = kNoMark;
      const Enumeration e = enumerate_crash_states(index, points, o, [&](const CrashState& s) {
        if (points[s.point].last_mark != mark) {
          since_mark.clear();
          mark = points[s.point].last_mark;
        }
        const ReplayedExports r = replay_state(index, points[s.point], s);
        Bytes all(2 * 16 * 512);
        r.read(0, 0, std::span<std::uint8_t>(all.data(), 16 * 512));
        r.read(1, 0, std::span<std::uint8_t>(all.data() + 16 * 512, 16 * 512));
        CAPTURE(bits, round, s.point, to_string(s.strategy));
        CHECK(s.first == since_mark.insert(all).second);
        if (bits == 64) {
          const auto read = [&](std::uint8_t d, std::uint64_t at, std::uint8_t* sector) {
            r.read(d, at, std::span<std::uint8_t>(sector, 512));
          };
          CHECK(s.fingerprint == StatePrints::from_contents({16 * 512, 16 * 512}, read));
        } else {
          CHECK(s.fingerprint < 8);
        }
        CHECK(state_of(index, points, o, s.key).kept == s.kept);  // the key builds the state again
        ++compared;
      });
      collisions += e.collisions;
    }
    CHECK(compared > 1000);
    if (bits == 3) CHECK(collisions > 100);  // told apart, not merged
  }
}

TEST_CASE("changes off 512-byte sectors turn merging off, and every state is tried", "[crash]") {
  Writer w;
  w.write(0, 1, 100, 10, 'a');
  w.e.ack(w.out, 0, 1, true);  // durable: the points walk past it
  w.write(0, 2, 100, 10, 'a');
  const Bytes bytes = w.finish();
  const RecordingIndex index(bytes);
  const auto points = crash_points(index, {});
  const Enumeration e = enumerate_crash_states(index, points, {}, {});
  CHECK_FALSE(e.fingerprints);
  CHECK(e.unique == e.states);
}

}  // namespace crash_states_test
