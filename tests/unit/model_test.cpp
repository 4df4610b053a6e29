// SPDX-License-Identifier: BSD-3-Clause
// The timing models, driven in virtual time: no sleeping, exact arithmetic
// where the model is exact, published shapes where it is statistical.
#include <catch2/catch.hpp>

#include <cmath>
#include <random>
#include <stdexcept>
#include <string>

#include "common/duration.h"
#include "server/model/hdd_model.h"
#include "server/model/make_model.h"
#include "server/model/model_spec.h"
#include "server/model/nvram_model.h"
#include "server/model/ssd_model.h"

namespace model_test {

using namespace nvj;

namespace {

std::string error_of(const std::string& spec, std::uint64_t size = 1ull << 30) {
  try {
    make_model(ModelSpec::parse(spec), size);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "accepted";
}

IoRequest write(std::uint64_t offset, std::uint64_t length, bool fua = false, std::uint8_t tag = 0) {
  return {IoOp::write, offset, length, fua, tag};
}
IoRequest read(std::uint64_t offset, std::uint64_t length) { return {IoOp::read, offset, length, false}; }
IoRequest flush() { return {IoOp::flush, 0, 0, false}; }

HddModel::Params hdd_params(std::uint64_t capacity, bool cache, std::uint64_t readahead) {
  HddModel::Params p;
  p.geometry.capacity = capacity;
  p.cache = cache;
  p.readahead = readahead;
  return p;
}

}  // namespace

TEST_CASE("model specs parse and every mistake is named", "[model]") {
  const auto spec = ModelSpec::parse("hdd:rpm=5400,cache=off");
  CHECK(spec.name == "hdd");
  CHECK(spec.params.at("rpm") == "5400");
  CHECK(ModelSpec::parse("nvram").params.empty());
  CHECK_THROWS_WITH(ModelSpec::parse(":rpm=1"), Catch::Contains("no model name"));
  CHECK_THROWS_WITH(ModelSpec::parse("hdd:rpm"), "'rpm' is not KEY=VALUE");
  CHECK_THROWS_WITH(ModelSpec::parse("hdd:rpm=1,rpm=2"), "'rpm' is given twice");
  CHECK_THROWS_WITH(ModelSpec::parse("hdd:rpm=1,"), "a trailing ','");

  CHECK(error_of("none") == "accepted");
  CHECK(error_of("nvram:latency=2us,bandwidth=2G") == "accepted");
  CHECK(error_of("ssd:cache=off") == "accepted");
  CHECK(error_of("hdd:rpm=5400,cache-size=8M") == "accepted");
  CHECK(error_of("tape") == "unknown model 'tape' (none, nvram, ssd or hdd)");
  CHECK(error_of("none:x=1") == "model none takes no parameters");
  CHECK_THAT(error_of("hdd:rpmx=1"), Catch::StartsWith("unknown hdd parameter 'rpmx' (it takes ") &&
                                         Catch::Contains("rpm") && Catch::Contains("seek-avg"));
  CHECK_THAT(error_of("hdd:rpm=99"), Catch::StartsWith("hdd rpm=99: expected a whole number from 1000 to 30000"));
  CHECK_THAT(error_of("nvram:latency=fast"), Catch::StartsWith("nvram latency=fast: 'fast' is not a duration"));
  CHECK_THAT(error_of("ssd:cache=maybe"), Catch::StartsWith("ssd cache=maybe: expected on or off"));
  CHECK_THAT(error_of("ssd:bandwidth=3X"), Catch::StartsWith("ssd bandwidth=3X: '3X' is not a size"));
  CHECK_THAT(error_of("hdd:seek-avg=20ms"), Catch::Contains("seek-track <= seek-avg <= seek-full"));
  CHECK_THAT(error_of("hdd:rate-inner=300M"), Catch::Contains("the inner no faster than the outer"));
  CHECK_THAT(error_of("hdd:capacity=1M"), Catch::Contains("smaller than the export"));
  CHECK_THAT(error_of("ssd:atomic=1000"), Catch::StartsWith("ssd atomic=1000: whole 512-byte sectors"));
  CHECK_THAT(error_of("nvram:atomic=2M"), Catch::StartsWith("nvram atomic=2M: whole 512-byte sectors"));
  CHECK_THAT(error_of("hdd:atomic=0"), Catch::StartsWith("hdd atomic=0: whole 512-byte sectors"));
}

TEST_CASE("each model has an atomic unit: its physical sector (an HDD's and an SSD's 4 KiB), or what atomic= says", "[model]") {
  const auto unit = [](const std::string& spec) { return make_model(ModelSpec::parse(spec), 1ull << 30)->atomic_unit(); };
  CHECK(unit("hdd") == 4096);
  CHECK(unit("hdd:atomic=512") == 512);
  CHECK(unit("nvram") == 512);
  CHECK(unit("ssd") == 4096);
  CHECK(unit("hdd:atomic=4K") == 4096);
  CHECK(unit("ssd:atomic=512") == 512);
  CHECK(unit("nvram:atomic=1M") == 1u << 20);
  CHECK(make_model(ModelSpec::parse("hdd:atomic=4K"), 1ull << 30)->restarted()->atomic_unit() == 4096);
}

TEST_CASE("nvram: latency plus link transfer, channels in parallel, free flush", "[model][nvram]") {
  NvramModel m(NvramModel::Params{1000, 10'000, 0, 4});
  CHECK(m.submit(write(0, 4096), 5000).done == 15'000);  // exactly L with no bandwidth limit
  CHECK(m.submit(read(0, 4096), 5000).done == 6000);
  CHECK(m.submit(flush(), 7000).done == 7000);
  // Two more on the remaining channels at once, then the fifth waits for the first free one.
  CHECK(m.submit(write(0, 512), 5000).done == 15'000);
  CHECK(m.submit(write(0, 512), 5000).done == 15'000);
  const IoTiming fifth = m.submit(write(0, 512), 5000);
  CHECK(fifth.done == 6000 + 10'000);
  CHECK(fifth.queued == 1000);

  NvramModel limited(NvramModel::Params{1000, 2000, 4096ull * 1'000'000, 4});  // 4096 bytes per us
  const IoTiming t = limited.submit(write(0, 8192), 0);
  CHECK(t.transfer == 2000);
  CHECK(t.done == 4000);
  CHECK(limited.submit(write(0, 8192), 0).done == 6000);  // waits for the shared link
  CHECK_FALSE(limited.volatile_cache());
}

TEST_CASE("ssd: cached writes are fast, flush programs the pages, cache off programs at once", "[model][ssd]") {
  SsdModel::Params p;
  p.bandwidth = 0;
  SsdModel m(p);
  CHECK(m.submit(write(0, 4096), 0).done == p.write_latency);
  CHECK(m.submit(write(1 << 20, 1 << 20), 0).done == p.write_latency);
  const IoTiming f = m.submit(flush(), 100'000);
  // 1 MiB + 4 KiB dirty = 65 pages of 16 KiB = 5 rounds over 16 channels.
  CHECK(f.destage == 5 * p.program_latency);
  CHECK(f.done == 100'000 + 5 * p.program_latency);
  CHECK(m.submit(flush(), f.done).done == f.done);  // nothing left
  CHECK(m.submit(read(8 << 20, 4096), f.done).done == f.done + p.read_latency);

  p.cache = false;
  SsdModel off(p);
  CHECK(off.submit(write(0, 4096), 0).done == p.program_latency + p.write_latency);
  CHECK_FALSE(off.volatile_cache());
}

TEST_CASE("hdd geometry: zones, cylinders and the three published seek points", "[model][hdd]") {
  HddModel::Params p = hdd_params(1ull << 40, true, 0);  // a 1 TiB disk
  const HddGeometry g(p.geometry);
  CHECK(g.revolution() == 8'333'333);  // 7200 rpm
  const auto n = g.cylinders();
  CHECK(n > 400'000);
  CHECK(n < 800'000);
  CHECK(g.cylinder_of(0) == 0);
  CHECK(g.cylinder_of((1ull << 40) - 1) >= n - 2);
  CHECK(g.rate_at(0) == p.geometry.rate_outer);
  CHECK(g.rate_at(n - 1) == p.geometry.rate_inner);
  CHECK(g.seek_time(0) == 0);
  CHECK(g.seek_time(1) == p.geometry.seek_track);
  CHECK(std::abs(g.seek_time((n - 1) / 3) - p.geometry.seek_average) < 10'000);
  CHECK(g.seek_time(n - 1) == p.geometry.seek_full);
  Nanos previous = 0;
  for (std::uint64_t d = 1; d < n; d += n / 97) {
    CHECK(g.seek_time(d) >= previous);  // never falls with distance
    previous = g.seek_time(d);
  }
  // Concave where it starts: the first tenth of the stroke costs over half the average.
  CHECK(g.seek_time(n / 10) > p.geometry.seek_average / 2);
}

TEST_CASE("hdd: random reads pay half a revolution on average and seeks grow with the span", "[model][hdd]") {
  HddModel m(hdd_params(1ull << 40, false, 0));
  std::mt19937_64 rng(7);
  double rotation = 0;
  double seek_short = 0;
  double seek_long = 0;
  constexpr int kReads = 4000;
  Nanos now = 0;
  for (int i = 0; i < kReads; ++i) {
    const std::uint64_t span = i % 2 == 0 ? (1ull << 30) : (1ull << 40);  // 1 GiB vs the whole disk
    const IoTiming t = m.submit(read((rng() % (span / 4096)) * 4096, 4096), now);
    rotation += static_cast<double>(t.rotation);
    (i % 2 == 0 ? seek_short : seek_long) += static_cast<double>(t.seek);
    now = t.done + 100 * kMicro;
  }
  const double half_rev = 8'333'333.0 / 2;
  CHECK(std::abs(rotation / kReads - half_rev) < 0.05 * half_rev);
  // Alternating between a 1 GiB span and the whole disk: the long seeks average
  // near a third of the stroke; short ones stay well below.
  CHECK(seek_long / (kReads / 2) > 7.0 * kMilli);
  CHECK(seek_short < seek_long);
}

TEST_CASE("hdd: sequential reads come from the read-ahead segment", "[model][hdd]") {
  HddModel m(hdd_params(1ull << 30, false, 1ull << 20));
  IoTiming t = m.submit(read(0, 4096), 0);
  CHECK_FALSE(t.cache_hit);
  Nanos now = t.done + 20 * kMicro;
  for (std::uint64_t off = 4096; off < 256 * 1024; off += 4096) {
    t = m.submit(read(off, 4096), now);
    REQUIRE(t.cache_hit);
    REQUIRE(t.done - now < 200 * kMicro);
    now = t.done + 20 * kMicro;
  }
}

TEST_CASE("hdd: queued sequential writes with the cache off pay no revolution", "[model][hdd]") {
  HddModel m(hdd_params(1ull << 30, false, 0));
  const IoTiming first = m.submit(write(1 << 20, 65536), 0);
  const IoTiming second = m.submit(write((1 << 20) + 65536, 65536), 0);  // queued behind the first
  CHECK(second.seek == 0);
  CHECK(second.rotation < m.geometry().revolution() / 100);
  CHECK(second.queued > 0);
  CHECK(second.done > first.done);
  // One that arrives after the sector went by waits nearly a whole turn, as a real disk does.
  const IoTiming late = m.submit(write((1 << 20) + 131072, 65536), second.done + 100 * kMicro);
  CHECK(late.rotation > m.geometry().revolution() * 9 / 10);
}

TEST_CASE("hdd: the write cache absorbs writes and flush pays for destaging them", "[model][hdd]") {
  HddModel::Params p = hdd_params(1ull << 30, true, 0);
  HddModel m(p);
  std::mt19937_64 rng(3);
  for (int i = 0; i < 100; ++i) {
    const IoTiming t = m.submit(write((rng() % 262144) * 4096, 4096), 0);
    REQUIRE(t.cache_hit);
    REQUIRE(t.done <= p.overhead + transfer_time(4096, p.interface_rate));
  }
  CHECK(m.dirty_bytes() == 100 * 4096);
  const IoTiming f = m.submit(flush(), 1000);
  CHECK(m.dirty_bytes() == 0);
  CHECK(f.destage > 100 * kMilli);  // 100 random media writes
  // In elevator order, 100 random blocks over 665 cylinders fall on about 93
  // distinct ones (665 * (1 - (664/665)^100)): about that many arm movements.
  CHECK(f.seeks >= 85);
  CHECK(f.seeks <= 100);
  CHECK(f.seek_distance > f.seeks);
  CHECK(f.done >= 1000 + f.destage);

  // Dirty data is destaged while the disk is idle.
  m.submit(write(0, 4096), f.done);
  m.submit(read(512ull << 20, 4096), f.done + kSecond);
  CHECK(m.dirty_bytes() == 0);

  // A FUA write goes to the media.
  const IoTiming fua = m.submit(write(4096, 4096, true), 3 * kSecond);
  CHECK_FALSE(fua.cache_hit);
  CHECK(fua.done - 3 * kSecond >= p.overhead);
  CHECK(m.dirty_bytes() == 0);

  // Idle destaging starts when the data is in the cache: after a long idle
  // time, a read just behind two cached writes waits for the arm.
  const Nanos later = 10 * kSecond;
  const IoTiming cached = m.submit(write(900ull << 20, 4096), later);
  m.submit(write(100ull << 20, 4096), cached.done);
  const IoTiming behind = m.submit(read(512ull << 20, 4096), cached.done + 1);
  CHECK(behind.queued > 0);
}

TEST_CASE("hdd and ssd: destaging is accounted to the tag each cached write carried", "[model][hdd][ssd]") {
  auto sum = [](const IoTiming& t) {
    Nanos s = 0;
    for (const Nanos d : t.destaged_by_tag) s += d;
    return s;
  };
  HddModel hdd(hdd_params(1ull << 30, true, 0));
  // Tag 1 in a 1 MiB window at 512 MiB (one sweep, sequential), tag 0 scattered.
  for (std::uint64_t i = 0; i < 16; ++i) hdd.submit(write((512ull << 20) + i * 65536, 65536, false, 1), 0);
  std::mt19937_64 rng(5);
  for (int i = 0; i < 16; ++i) hdd.submit(write((rng() % 65536) * 4096, 4096), 0);
  const IoTiming f = hdd.submit(flush(), 1000);
  CHECK(f.destage > 0);
  CHECK(sum(f) == f.destage);
  CHECK(f.destaged_by_tag[1] > 0);
  CHECK(f.destaged_by_tag[0] > f.destaged_by_tag[1]);  // 16 scattered blocks cost more than 1 MiB in one place
  CHECK(f.destaged_by_tag[2] == 0);
  // What the idle disk destaged before a request came is in its tags only.
  hdd.submit(write(4096, 4096, false, 3), f.done);
  const IoTiming idle = hdd.submit(read(700ull << 20, 4096), f.done + kSecond);
  CHECK(idle.destage == 0);
  CHECK(idle.destaged_by_tag[3] > 0);
  CHECK(sum(idle) == idle.destaged_by_tag[3]);

  SsdModel::Params p;
  p.bandwidth = 0;
  SsdModel ssd(p);
  ssd.submit(write(0, 3 << 20, false, 0), 0);
  ssd.submit(write(8 << 20, 1 << 20, false, 2), 0);
  const IoTiming g = ssd.submit(flush(), 0);
  CHECK(sum(g) == g.destage);
  CHECK(g.destaged_by_tag[0] == 3 * g.destaged_by_tag[2]);  // shares of the bytes
  CHECK(ssd.submit(flush(), g.done).destage == 0);
}

TEST_CASE("hdd: a full cache destages before it takes more", "[model][hdd]") {
  HddModel::Params p = hdd_params(1ull << 30, true, 0);
  p.cache_size = 256 << 10;
  HddModel m(p);
  Nanos destage = 0;
  for (int i = 0; i < 128; ++i) destage += m.submit(write(static_cast<std::uint64_t>(i) * (8 << 20), 4096), 0).destage;
  CHECK(m.dirty_bytes() <= p.cache_size);
  CHECK(destage > 0);
}

TEST_CASE("hdd: the same seed gives the same timings and another seed others", "[model][hdd]") {
  auto run = [](std::uint64_t seed) {
    HddModel::Params p = hdd_params(1ull << 30, true, 1 << 20);
    p.seed = seed;
    HddModel m(p);
    std::mt19937_64 rng(11);
    std::vector<Nanos> done;
    Nanos now = 0;
    for (int i = 0; i < 200; ++i) {
      const std::uint64_t off = (rng() % 262144) * 4096;
      const IoTiming t = i % 3 == 0 ? m.submit(read(off, 4096), now) : m.submit(write(off, 4096, i % 7 == 0), now);
      done.push_back(t.done);
      now = t.done + 50 * kMicro;
    }
    return done;
  };
  CHECK(run(1) == run(1));
  CHECK(run(1) != run(2));
}

TEST_CASE("a restarted model has the same parameters and an empty cache", "[model][hdd]") {
  HddModel m(hdd_params(1ull << 30, true, 0));
  for (int i = 0; i < 10; ++i) m.submit(write(static_cast<std::uint64_t>(i) * (64 << 20), 4096), 0);
  REQUIRE(m.dirty_bytes() == 10 * 4096);
  const auto fresh = m.restarted();
  CHECK(fresh->describe() == m.describe());
  const IoTiming f = fresh->submit(flush(), 0);
  CHECK(f.destage == 0);  // nothing was left to write home
  CHECK(m.submit(flush(), 0).destage > 0);
}

}  // namespace model_test
