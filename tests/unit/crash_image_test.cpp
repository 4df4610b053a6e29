// SPDX-License-Identifier: BSD-3-Clause
// The crash lab's in-place states (crashlab/index/piece_map.h,
// crashlab/states/crash_image.h): pieces put in any order read back as if put in sequence
// order, and every crash state of random recordings (aligned and not) reads
// back exactly what replaying it the obvious way gives, nothing outside the
// ranges it says it covers; what a check writes into a state stays in that
// state. Ranges with the same name (identity) hold the same bytes.
#include <catch2/catch.hpp>

#include <cstdint>
#include <map>
#include <numeric>
#include <random>
#include <vector>

#include "crashlab/states/crash_image.h"
#include "crashlab/index/piece_map.h"
#include "tests/unit/random_recording.h"

namespace crash_image_test {

using namespace fscore::record;
using namespace crashlab;
using namespace recording_tests;

TEST_CASE("pieces put in any order read back as if put in sequence order", "[crash]") {
  std::mt19937_64 rng(7);
  Bytes pool(1 << 16);
  for (auto& b : pool) b = static_cast<std::uint8_t>(rng());
  for (int round = 0; round < 200; ++round) {
    constexpr std::uint64_t kSize = 3000;
    std::vector<std::uint64_t> holder(kSize, 0);  // sequence holding each byte (0: none)
    Bytes expect(kSize, 0xEE);
    PieceMap map;
    std::vector<std::uint64_t> sequences(40);
    std::iota(sequences.begin(), sequences.end(), 1);
    std::shuffle(sequences.begin(), sequences.end(), rng);
    for (const std::uint64_t seq : sequences) {
      const std::uint64_t offset = rng() % kSize, length = 1 + rng() % (kSize - offset);
      const bool zeroes = rng() % 5 == 0;
      const std::uint8_t* data = zeroes ? nullptr : pool.data() + rng() % (pool.size() - length);
      map.put(offset, length, seq, data);
      for (std::uint64_t i = 0; i < length; ++i)
        if (holder[offset + i] < seq) {
          holder[offset + i] = seq;
          expect[offset + i] = zeroes ? 0 : data[i];
        }
      // Reads of any range, and each() naming the holder of every byte.
      const std::uint64_t from = rng() % kSize, n = rng() % (kSize - from + 1);
      Bytes got(n, 0xEE);
      map.read(from, got);
      CAPTURE(round, seq, from, n);
      CHECK(std::equal(got.begin(), got.end(), expect.begin() + static_cast<std::ptrdiff_t>(from)));
      std::uint64_t at = from;
      bool holders_agree = true;
      map.each(from, n, [&](std::uint64_t a, std::uint64_t b, std::uint64_t s) {
        holders_agree = holders_agree && a == at && b > a;
        for (std::uint64_t i = a; i < b; ++i) holders_agree = holders_agree && holder[i] == s;
        at = b;
      });
      CHECK(holders_agree);
      CHECK(at == from + n);
    }
    // Neighbours that continue each other are joined: a map of one change
    // put in pieces is one piece.
    PieceMap one;
    one.put(100, 50, 3, pool.data() + 100);
    one.put(0, 100, 3, pool.data());
    one.put(150, 50, 3, pool.data() + 150);
    CHECK(one.pieces().size() == 1);
  }
}

TEST_CASE("a crash image reads back every state of random recordings as replaying it does", "[crash]") {
  std::mt19937_64 rng(20261124);
  std::size_t compared = 0;
  std::size_t narrower = 0;  // states whose zeroes nonzero() leaves out of covered()
  for (int round = 0; round < 60; ++round) {
    const std::uint64_t unit = round % 3 == 0 ? 100 : 512;  // a third off sectors
    const Bytes bytes = random_recording(rng, 16, unit);
    const RecordingIndex index(bytes);
    const auto points = crash_points(index, {true, true, 2});
    StrategyOptions o;
    o.random = 3;
    o.seed = static_cast<std::uint64_t>(round);
    o.torn = 2;
    CrashImage image(index);
    std::map<std::vector<std::uint64_t>, Bytes> named;  // (export, identity) -> the bytes it named
    REQUIRE(image.count() == 2);
    CHECK(image.find("journal") == std::uint8_t{1});
    CHECK_FALSE(image.find("nope"));
    enumerate_crash_states(index, points, o, [&](const CrashState& s) {
      image.advance(points[s.point].sequence);
      image.set_state(s.kept, s.torn);
      const ReplayedExports r = replay_state(index, points[s.point], s);
      CAPTURE(round, s.point, to_string(s.strategy));
      for (std::uint8_t d = 0; d < 2; ++d) {
        Bytes want(16 * 512), got(16 * 512);
        r.read(d, 0, want);
        image.exported(d).read(0, got);
        CHECK(got == want);
        // What no range covers reads as zeroes, nor outside nonzero(),
        // which lies in covered(); both are ordered and apart (every 16th
        // state: a byte at a time is slow unoptimised).
        if (compared % 16 == 0) {
          std::vector<bool> in_covered, in_nonzero;
          for (const bool nonzero : {false, true}) {
            std::vector<bool> in(got.size(), false);
            std::uint64_t last_end = 0;
            bool ordered = true;
            const auto ranges = nonzero ? image.exported(d).nonzero() : image.exported(d).covered();
            for (const auto& [start, end] : ranges) {
              ordered = ordered && start >= last_end && end > start && (last_end == 0 || start > last_end);
              last_end = end;
              for (std::uint64_t i = start; i < end; ++i) in[i] = true;
            }
            CAPTURE(nonzero);
            CHECK(ordered);
            bool zero_outside = true;
            for (std::size_t i = 0; i < got.size(); ++i) zero_outside = zero_outside && (in[i] || got[i] == 0);
            CHECK(zero_outside);
            (nonzero ? in_nonzero : in_covered) = std::move(in);
          }
          bool inside = true;
          for (std::size_t i = 0; i < got.size(); ++i) inside = inside && (!in_nonzero[i] || in_covered[i]);
          CHECK(inside);
          if (in_nonzero != in_covered) ++narrower;
        }
        // A read of part of it, off sectors.
        Bytes part(777);
        image.exported(d).read(1001, part);
        CHECK(std::equal(part.begin(), part.end(), want.begin() + 1001));
      }
      // Ranges with one name hold one content, whatever the state.
      for (int tries = 0; tries < 4; ++tries) {
        const auto d = static_cast<std::uint8_t>(rng() % 2);
        const std::uint64_t from = rng() % 8192, n = 1 + rng() % (8192 - from);
        Bytes held(n);
        image.exported(d).read(from, held);
        std::vector<std::uint64_t> name{d};
        REQUIRE(image.exported(d).identity(from, n, name));
        const auto [it, added] = named.emplace(name, held);
        CHECK(it->second == held);
      }
      // What a check writes is read back in this state only; its name is
      // its bytes' wherever a state wrote them (one of two contents).
      const Bytes mine(300, static_cast<std::uint8_t>(0xC0 + rng() % 2));
      image.exported(0).write(4000, mine);
      Bytes back(300);
      image.exported(0).read(4000, back);
      CHECK(back == mine);
      std::vector<std::uint64_t> name{0};
      REQUIRE(image.exported(0).identity(3900, 500, name));
      Bytes held(500);
      image.exported(0).read(3900, held);
      const auto [it, added] = named.emplace(name, held);
      CHECK(it->second == held);
      ++compared;
    });
  }
  CHECK(compared > 1000);
  CHECK(narrower > 0);
}

TEST_CASE("a crash image refuses reads and writes past an export's end", "[crash]") {
  Writer w(4096);
  const Bytes bytes = w.finish();
  const RecordingIndex index(bytes);
  CrashImage image(index);
  Bytes b(10);
  CHECK_THROWS_WITH(image.exported(0).read(4090, b), Catch::Contains("past the end"));
  CHECK_THROWS_WITH(image.exported(1).write(5000, b), Catch::Contains("past the end"));
  CHECK_NOTHROW(image.exported(0).read(4086, b));
}

TEST_CASE("a kept volatile change does not cover a later change that became durable before it", "[crash]") {
  Writer w;
  w.write(0, 1, 0, 1024, 'v');  // volatile: never acknowledged
  w.write(0, 2, 512, 1024, 'd');
  w.e.ack(w.out, 0, 2, true);   // durable on acknowledgement (FUA)
  w.e.mark(w.out, 0, "after");
  const Bytes bytes = w.finish();
  const RecordingIndex index(bytes);
  const auto points = crash_points(index, {true, false, 0});
  REQUIRE(points.size() == 2);
  REQUIRE(points[0].volatile_changes == std::vector<std::size_t>{0});
  CrashImage image(index);
  image.advance(points[0].sequence);
  image.set_state({0});
  Bytes got(2048);
  image.exported(0).read(0, got);
  CHECK(std::all_of(got.begin(), got.begin() + 512, [](std::uint8_t b) { return b == 'v'; }));
  CHECK(std::all_of(got.begin() + 512, got.begin() + 1536, [](std::uint8_t b) { return b == 'd'; }));
  CHECK(std::all_of(got.begin() + 1536, got.end(), [](std::uint8_t b) { return b == 0; }));
  image.set_state({});
  image.exported(0).read(0, got);
  CHECK(std::all_of(got.begin(), got.begin() + 512, [](std::uint8_t b) { return b == 0; }));
}

}  // namespace crash_image_test
