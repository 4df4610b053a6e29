// SPDX-License-Identifier: BSD-3-Clause
// Power cuts on a real store through the write log: what survives each
// policy, flush and FUA boundaries, torn in-flight writes, seeds.
#include <catch2/catch.hpp>

#include <string>

#include "server/powerloss/write_log.h"
#include "server/store/memory_store.h"

namespace write_log_test {

using namespace nvj;

namespace {

struct Disk {
  MemoryStore store{1 << 20};
  WriteLog log{1 << 20};

  // A write as the device does it: logged, landed, acknowledged.
  void write(std::uint64_t offset, char fill, bool durable = false, std::uint32_t count = 4096) {
    const std::string data(count, fill);
    const auto id = log.begin(store, offset, count, data.data());
    store.write(data.data(), count, offset, durable);
    log.acknowledge(id, durable);
  }
  void flush() { log.flush_end(log.flush_begin()); }
  char at(std::uint64_t offset) {
    char c = 0;
    store.read(&c, 1, offset);
    return c;
  }
};

CrashPolicy policy(CrashPolicy::Kind kind, std::uint64_t seed = 1, std::uint64_t unit = 512) {
  return CrashPolicy{kind, seed, unit};
}

}  // namespace

TEST_CASE("policy all: flushed and FUA writes survive, volatile ones are lost", "[power]") {
  Disk d;
  d.write(0, 'a');
  d.flush();  // 'a' durable
  d.write(0, 'b');
  d.write(8192, 'c', true);   // FUA
  d.write(16384, 'd');
  d.write(8192 + 4096, 'e');
  const auto r = d.log.cut(d.store, policy(CrashPolicy::Kind::all));
  CHECK(d.at(0) == 'a');
  CHECK(d.at(8192) == 'c');
  CHECK(d.at(16384) == 0);
  CHECK(d.at(8192 + 4096) == 0);
  CHECK(r.volatile_lost == 3);
  CHECK(r.durable == 1);
  CHECK(r.bytes_lost == 3 * 4096);
  CHECK(d.log.entries() == 0);
}

TEST_CASE("a FUA write over a lost volatile one keeps its own bytes", "[power]") {
  Disk d;
  d.write(0, 'v');
  d.write(0, 'f', true);
  d.log.cut(d.store, policy(CrashPolicy::Kind::all));
  CHECK(d.at(0) == 'f');
}

TEST_CASE("a flush covers only writes acknowledged before it was sent", "[power]") {
  Disk d;
  d.write(0, 'x');
  const auto covered = d.log.flush_begin();
  d.write(4096, 'y');  // acknowledged while the flush runs
  d.log.flush_end(covered);
  d.log.cut(d.store, policy(CrashPolicy::Kind::all));
  CHECK(d.at(0) == 'x');
  CHECK(d.at(4096) == 0);
}

TEST_CASE("policy random keeps a seeded subset and reorder shuffles it", "[power]") {
  auto survivors = [](CrashPolicy::Kind kind, std::uint64_t seed) {
    Disk d;
    for (int i = 0; i < 64; ++i) d.write(static_cast<std::uint64_t>(i) * 4096, static_cast<char>('A' + i % 26));
    const auto r = d.log.cut(d.store, policy(kind, seed));
    std::string kept;
    for (int i = 0; i < 64; ++i) kept += d.at(static_cast<std::uint64_t>(i) * 4096) == 0 ? '-' : 'k';
    CHECK(r.volatile_kept + r.volatile_lost == 64);
    return kept;
  };
  const auto a = survivors(CrashPolicy::Kind::random, 7);
  CHECK(a == survivors(CrashPolicy::Kind::random, 7));  // the same seed, the same loss
  CHECK(a != survivors(CrashPolicy::Kind::random, 8));
  CHECK(a.find('k') != std::string::npos);
  CHECK(a.find('-') != std::string::npos);

  // Reorder: overlapping kept writes may land out of order.
  bool saw_older_on_top = false;
  for (std::uint64_t seed = 1; seed < 40 && !saw_older_on_top; ++seed) {
    Disk d;
    for (char c = 'a'; c <= 'h'; ++c) d.write(0, c);  // eight writes to one block
    d.log.cut(d.store, policy(CrashPolicy::Kind::reorder, seed));
    const char top = d.at(0);
    // In order, the survivor on top would be the newest kept one; with
    // reorder an older one can end up there.
    Disk in_order;
    for (char c = 'a'; c <= 'h'; ++c) in_order.write(0, c);
    in_order.log.cut(in_order.store, policy(CrashPolicy::Kind::random, seed));
    saw_older_on_top = top != 0 && top != in_order.at(0);
  }
  CHECK(saw_older_on_top);
}

TEST_CASE("writes in flight are torn at the atomic unit", "[power]") {
  MemoryStore store(1 << 20);
  WriteLog log(1 << 20);
  const std::string data(64 * 512, 'T');
  log.begin(store, 0, static_cast<std::uint32_t>(data.size()), data.data());  // never acknowledged
  store.write(data.data(), static_cast<std::uint32_t>(data.size()), 0, false);
  const auto r = log.cut(store, policy(CrashPolicy::Kind::all, 3, 512));
  CHECK(r.in_flight == 1);
  int kept = 0;
  for (int u = 0; u < 64; ++u) {
    std::string unit(512, '?');
    store.read(unit.data(), 512, static_cast<std::uint64_t>(u) * 512);
    const bool whole = unit == std::string(512, 'T');
    REQUIRE((whole || unit == std::string(512, '\0')));  // never a partial unit
    kept += whole ? 1 : 0;
  }
  CHECK(kept > 0);
  CHECK(kept < 64);
  CHECK(r.bytes_lost == static_cast<std::uint64_t>(64 - kept) * 512);
}

TEST_CASE("zero and trim are logged like writes", "[power]") {
  Disk d;
  d.write(0, 'z');
  d.flush();
  const auto id = d.log.begin(d.store, 0, 4096, nullptr);
  d.store.zero(4096, 0, false);
  d.log.acknowledge(id, false);
  CHECK(d.at(0) == 0);
  d.log.cut(d.store, policy(CrashPolicy::Kind::all));
  CHECK(d.at(0) == 'z');  // the zeroing was volatile
}

TEST_CASE("the log stays within its limit by treating its oldest writes as destaged", "[power]") {
  MemoryStore store(1 << 20);
  WriteLog log(64 * 1024);
  const std::string data(4096, 'L');
  for (int i = 0; i < 64; ++i) {
    const auto id = log.begin(store, static_cast<std::uint64_t>(i) * 4096, 4096, data.data());
    store.write(data.data(), 4096, static_cast<std::uint64_t>(i) * 4096, false);
    log.acknowledge(id, false);
  }
  CHECK(log.bytes() <= 64 * 1024);
  const auto r = log.cut(store, policy(CrashPolicy::Kind::all));
  char first = 0;
  store.read(&first, 1, 0);
  CHECK(first == 'L');  // destaged early: survives
  CHECK(r.volatile_lost == 8);
}

TEST_CASE("a write that failed does not hold the log open", "[power]") {
  MemoryStore store(1 << 20);
  WriteLog log(1 << 20);
  const std::string data(4096, 'F');
  const auto failed = log.begin(store, 0, 4096, data.data());
  log.acknowledge(failed, true);  // what the device does when the store throws
  for (int i = 1; i < 10; ++i) {
    const auto id = log.begin(store, static_cast<std::uint64_t>(i) * 4096, 4096, data.data());
    store.write(data.data(), 4096, static_cast<std::uint64_t>(i) * 4096, false);
    log.acknowledge(id, true);
  }
  CHECK(log.entries() == 0);
}

}  // namespace write_log_test
