// SPDX-License-Identifier: BSD-3-Clause
// The crash lab's recording from the server's side (server/record/): real
// Devices on MemoryStores record into a real file; the file is read back
// with fscore's FrameReader. What it must hold: the starting contents, every
// change in the order it landed with its acknowledgement, every flush and
// mark, so that replaying it rebuilds the exports byte for byte; and when it
// cannot keep up or its file stops taking bytes, it stops with the reason
// in its end frame while the devices serve on.
#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/resource.h>

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "fscore/record/frame_reader.h"
#include "fscore/record/old_data.h"
#include "fscore/record/replayed_exports.h"
#include "server/device/device.h"
#include "server/record/recorder.h"
#include "server/store/memory_store.h"
#include "tests/support/file_bytes.h"
#include "tests/support/temp_dir.h"

namespace recorder_test {

using fscore::record::Frame;
using fscore::record::FrameKind;
using fscore::record::FrameReader;
using fscore::record::ReplayedExports;
using nvj::Device;
using nvj::Durability;
using nvj::MemoryStore;
using nvj::Recorder;
using nvj::test::file_bytes;
using nvj::test::TempDir;

namespace {

constexpr std::uint64_t kMiB = 1 << 20;

std::vector<char> bytes(std::size_t n, std::uint64_t salt) {
  std::vector<char> out(n);
  for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<char>((i * 13 + salt) % 251);
  return out;
}

// A data disk (durable after flush) and an NVRAM journal (durable when
// acknowledged), both without timing; the data disk holds something at the
// start.
struct Lab {
  std::unique_ptr<Device> data, journal;
  Lab() {
    data = std::make_unique<Device>("data", std::make_unique<MemoryStore>(4 * kMiB), Durability::on_flush);
    journal = std::make_unique<Device>("journal", std::make_unique<MemoryStore>(kMiB), Durability::on_acknowledge);
    const auto start = bytes(12288, 1);
    data->write(start.data(), 12288, 65536, false);
  }
  std::unique_ptr<Recorder> record(const std::string& path, std::uint64_t buffer = 64 * kMiB) {
    auto r = std::make_unique<Recorder>(Recorder::Options{path, buffer},
                                        std::vector<fscore::record::ExportInfo>{{"data", 4 * kMiB}, {"journal", kMiB}});
    auto paused_data = data->pause_changes();
    auto paused_journal = journal->pause_changes();
    data->record_base(*r, 0);
    journal->record_base(*r, 1);
    data->set_recorder(r.get(), 0);
    journal->set_recorder(r.get(), 1);
    return r;
  }
  std::vector<char> read(Device& d, std::uint64_t offset, std::uint32_t n) {
    std::vector<char> out(n);
    d.read(out.data(), n, offset);
    return out;
  }
};

struct Read {
  std::vector<Frame> frames;
  bool stopped = false;
  std::string reason;
};

Read read_recording(const std::vector<std::uint8_t>& file) {
  FrameReader r(file);
  Read out;
  while (auto f = r.next()) out.frames.push_back(*f);
  out.stopped = r.stopped();
  out.reason = r.stop_reason();
  return out;
}

}  // namespace

TEST_CASE("a recording holds the starting contents and every change, and rebuilds the exports", "[recording]") {
  TempDir dir;
  const std::string path = dir.file("run.nvjrec");
  Lab lab;
  auto recorder = lab.record(path);
  recorder->start();

  const auto a = bytes(8192, 2), b = bytes(4096, 3), j = bytes(4096, 4);
  lab.data->write(a.data(), 8192, 69632, false);  // over the starting contents' middle
  lab.journal->write(j.data(), 4096, 0, false);
  lab.data->zero(4096, 65536, false);
  lab.data->flush();
  lab.data->write(b.data(), 4096, 3 * kMiB, true);
  lab.data->trim(8192, 73728, false);
  recorder->mark(42, "after the trim");
  const Recorder::Status status = recorder->stop();
  CHECK_FALSE(status.recording);
  CHECK(status.error.empty());
  CHECK(status.changes == 5);
  CHECK(status.marks == 1);
  CHECK(status.base_bytes == 12288);

  // Changes after the end are not recorded, and the devices serve on.
  lab.data->write(b.data(), 4096, 0, false);

  const auto file = file_bytes(path);
  CHECK(file.size() == status.bytes_written);
  const Read rec = read_recording(file);
  CHECK_FALSE(rec.stopped);
  std::vector<std::string> kinds;
  for (const Frame& f : rec.frames) kinds.push_back(to_string(f.kind));
  // The base of data (journal's is empty), then each change before its ack;
  // the flush covers what was acknowledged before it.
  CHECK(kinds == std::vector<std::string>{"base", "write", "ack", "write", "ack", "zero", "ack", "flush", "flush_done",
                                          "write", "ack", "trim", "ack", "mark", "end"});
  CHECK(rec.frames[2].durable() == false);  // data: durable after flush
  CHECK(rec.frames[4].durable() == true);   // journal: NVRAM
  CHECK(rec.frames[10].durable() == true);  // FUA
  CHECK(rec.frames[9].fua());
  CHECK(rec.frames[13].text == "after the trim");
  CHECK(rec.frames[13].time_ns == 42);

  // Replayed, the recording is the exports as they were at its end.
  FrameReader again(file);
  ReplayedExports replayed(again.exports());
  while (auto f = again.next()) replayed.apply(*f);
  for (std::uint8_t device : {std::uint8_t{0}, std::uint8_t{1}}) {
    Device& d = device == 0 ? *lab.data : *lab.journal;
    std::vector<std::uint8_t> want(d.size()), got(d.size());
    for (std::uint64_t at = 0; at < d.size(); at += kMiB) {
      const auto part = lab.read(d, at, static_cast<std::uint32_t>(kMiB));
      std::copy(part.begin(), part.end(), want.begin() + static_cast<std::ptrdiff_t>(at));
    }
    if (device == 0) std::fill(want.begin(), want.begin() + 4096, 0);  // the write after the end
    replayed.read(device, 0, got);
    CAPTURE(device);
    CHECK(got == want);
  }
}

TEST_CASE("a recording's base leaves out the starting contents' blocks of zeroes, and still rebuilds them",
          "[recording]") {
  // The journal starts as an XFS log after mkfs: written, but zeroes; the
  // data disk as 12 KiB of bytes (the Lab's) then 8 KiB of zeroes, one byte
  // in a block of zeroes, 4 KiB of zeroes and a last block of bytes.
  TempDir dir;
  const std::string path = dir.file("zeroes.nvjrec");
  Lab lab;
  const std::vector<char> zeroes(kMiB, 0);
  lab.journal->write(zeroes.data(), static_cast<std::uint32_t>(kMiB), 0, false);
  lab.data->write(zeroes.data(), 8192, 77824, false);
  const char one = 7;
  lab.data->write(zeroes.data(), 4096, 86016, false);
  lab.data->write(&one, 1, 86016 + 100, false);
  lab.data->write(zeroes.data(), 4096, 90112, false);
  const auto tail = bytes(4096, 9);
  lab.data->write(tail.data(), 4096, 94208, false);
  auto recorder = lab.record(path);
  recorder->start();
  const Recorder::Status status = recorder->stop();
  CHECK(status.base_bytes == 12288 + 4096 + 4096);

  const auto file = file_bytes(path);
  const Read rec = read_recording(file);
  std::vector<std::pair<std::uint64_t, std::size_t>> bases;  // offset, length: the journal's none
  for (const Frame& f : rec.frames)
    if (f.kind == FrameKind::base) {
      CHECK(f.device == 0);
      bases.emplace_back(f.offset, f.data.size());
    }
  CHECK(bases == std::vector<std::pair<std::uint64_t, std::size_t>>{{65536, 12288}, {86016, 4096}, {94208, 4096}});

  FrameReader again(file);
  ReplayedExports replayed(again.exports());
  while (auto f = again.next()) replayed.apply(*f);
  std::vector<std::uint8_t> got(kMiB);
  replayed.read(0, 0, got);
  for (std::uint64_t at = 0; at < got.size(); at += 4096) {
    const auto want = lab.read(*lab.data, at, 4096);
    CAPTURE(at);
    CHECK(std::equal(want.begin(), want.end(), got.begin() + static_cast<std::ptrdiff_t>(at),
                     [](char a, std::uint8_t b) { return static_cast<std::uint8_t>(a) == b; }));
  }
  std::vector<std::uint8_t> log(kMiB, 1);
  replayed.read(1, 0, log);
  CHECK(std::count(log.begin(), log.end(), 0) == static_cast<std::ptrdiff_t>(kMiB));
}

TEST_CASE("a recording keeps the starting contents' old data as ranges, and still rebuilds them", "[recording]") {
  // The data disk holds 3 MiB of old data (fs-free=old-data's free blocks)
  // from 1 MiB on, one byte changed in its second block, and the Lab's
  // bytes at 64 KiB: the old data is recorded as ranges of at most 1 MiB,
  // the changed block as its bytes, and the replay reads it all back.
  TempDir dir;
  const std::string path = dir.file("old.nvjrec");
  Lab lab;
  const auto old = fscore::record::old_data(fscore::record::kOldDataSpan);
  for (std::uint64_t at = kMiB; at < 4 * kMiB; at += kMiB)
    lab.data->write(reinterpret_cast<const char*>(old.data()), static_cast<std::uint32_t>(kMiB), at, false);
  const char one = 'x';
  lab.data->write(&one, 1, kMiB + 4096 + 17, false);
  auto recorder = lab.record(path);
  recorder->start();
  recorder->stop();

  const auto file = file_bytes(path);
  CHECK(file.size() < 64 * 1024);  // not the 3 MiB
  const Read rec = read_recording(file);
  std::vector<std::pair<std::uint64_t, std::uint64_t>> old_ranges, byte_ranges;
  for (const Frame& f : rec.frames) {
    if (f.kind != FrameKind::base) continue;
    (f.old_data() ? old_ranges : byte_ranges).emplace_back(f.offset, f.length);
    CHECK(f.data.size() == f.length);
  }
  CHECK(byte_ranges == std::vector<std::pair<std::uint64_t, std::uint64_t>>{{65536, 12288}, {kMiB + 4096, 4096}});
  // The base is read a MiB at a time: a range ends with each.
  CHECK(old_ranges == std::vector<std::pair<std::uint64_t, std::uint64_t>>{
                          {kMiB, 4096}, {kMiB + 8192, kMiB - 8192}, {2 * kMiB, kMiB}, {3 * kMiB, kMiB}});

  FrameReader again(file);
  ReplayedExports replayed(again.exports());
  while (auto f = again.next()) replayed.apply(*f);
  std::vector<std::uint8_t> got(4 * kMiB);
  replayed.read(0, 0, got);
  const auto want = lab.read(*lab.data, 0, static_cast<std::uint32_t>(4 * kMiB));
  CHECK(std::equal(want.begin(), want.end(), got.begin(),
                   [](char a, std::uint8_t b) { return static_cast<std::uint8_t>(a) == b; }));
}

TEST_CASE("writes from many threads, their bytes copied in after their frames, rebuild the exports",
          "[recording]") {
  // Overlapping writes of mixed sizes from 4 threads: the writer seals and
  // writes batches (every 256 KiB) while other frames' bytes are still being
  // copied in; every frame must be whole and the order the stores'.
  TempDir dir;
  const std::string path = dir.file("threads.nvjrec");
  Lab lab;
  auto recorder = lab.record(path);
  recorder->start();
  std::vector<std::thread> threads;
  for (std::uint64_t t = 0; t < 4; ++t)
    threads.emplace_back([&lab, t] {
      std::uint64_t state = t + 1;
      for (int i = 0; i < 1500; ++i) {
        state = state * 6364136223846793005u + 1442695040888963407u;
        const std::uint32_t length = static_cast<std::uint32_t>(4096 * (1 + (state >> 60)));  // 4 to 64 KiB
        const std::uint64_t offset = (state >> 20) % (kMiB - length) / 512 * 512;  // within 1 MiB: they overlap
        const auto data = bytes(length, state);
        Device& d = (state >> 8) % 4 == 0 ? *lab.journal : *lab.data;
        d.write(data.data(), length, offset, false);
        if (i % 100 == 0) d.flush();
      }
    });
  for (auto& th : threads) th.join();
  const Recorder::Status status = recorder->stop();
  CHECK(status.error.empty());
  CHECK(status.changes == 6000);

  const auto file = file_bytes(path);
  FrameReader r(file);
  ReplayedExports replayed(r.exports());
  std::size_t writes = 0;
  while (auto f = r.next()) {
    replayed.apply(*f);
    writes += f->kind == FrameKind::write;
  }
  CHECK(writes == 6000);
  for (std::uint8_t device : {std::uint8_t{0}, std::uint8_t{1}}) {
    Device& d = device == 0 ? *lab.data : *lab.journal;
    std::vector<std::uint8_t> got(kMiB);
    replayed.read(device, 0, got);
    const auto want = lab.read(d, 0, static_cast<std::uint32_t>(kMiB));
    CAPTURE(device);
    CHECK(std::equal(got.begin(), got.end(), want.begin(), want.end(),
                     [](std::uint8_t a, char b) { return a == static_cast<std::uint8_t>(b); }));
  }
}

TEST_CASE("a recording never overwrites a file", "[recording]") {
  TempDir dir;
  const std::string path = dir.file("there");
  std::ofstream(path) << "precious";
  Lab lab;
  CHECK_THROWS_WITH(lab.record(path), Catch::Contains("exists: a recording never overwrites a file"));
  std::ifstream in(path);
  std::string text;
  in >> text;
  CHECK(text == "precious");
}

TEST_CASE("a recording that cannot keep up stops and says why, and the devices serve on", "[recording]") {
  TempDir dir;
  const std::string path = dir.file("small.nvjrec");
  Lab lab;
  // A buffer smaller than one write's frame: the first write overflows it.
  auto recorder = lab.record(path, 1024);
  recorder->start();
  const auto a = bytes(4096, 5);
  lab.data->write(a.data(), 4096, 0, false);
  lab.data->write(a.data(), 4096, 8192, false);
  CHECK(lab.read(*lab.data, 8192, 4096) == a);
  const Recorder::Status status = recorder->stop();
  CHECK_THAT(status.error, Catch::Contains("could not keep up"));
  const Read rec = read_recording(file_bytes(path));
  CHECK(rec.stopped);
  CHECK_THAT(rec.reason, Catch::Contains("could not keep up"));
  // The base, the write that overflowed (never acknowledged in the recording), the end.
  REQUIRE(rec.frames.size() == 3);
  CHECK(rec.frames[1].kind == FrameKind::write);
  CHECK(rec.frames[2].kind == FrameKind::end);
}

TEST_CASE("a recording whose file stops taking bytes stops, and the devices serve on", "[recording]") {
  TempDir dir;
  const std::string path = dir.file("full.nvjrec");
  Lab lab;
  auto recorder = lab.record(path);  // header and base: about 12 KiB
  // Files of this process may not grow past 64 KiB from now on, as on a
  // full disk: writes fail (EFBIG) instead of raising SIGXFSZ.
  struct sigaction ignore {}, old_action {};
  ignore.sa_handler = SIG_IGN;
  REQUIRE(sigaction(SIGXFSZ, &ignore, &old_action) == 0);
  rlimit old_limit{};
  REQUIRE(getrlimit(RLIMIT_FSIZE, &old_limit) == 0);
  rlimit small = old_limit;
  small.rlim_cur = 64 * 1024;
  REQUIRE(setrlimit(RLIMIT_FSIZE, &small) == 0);
  recorder->start();
  const auto a = bytes(16384, 6);
  for (std::uint64_t i = 0; i < 16; ++i) lab.data->write(a.data(), 16384, i * 16384, false);
  const Recorder::Status status = recorder->stop();
  REQUIRE(setrlimit(RLIMIT_FSIZE, &old_limit) == 0);
  REQUIRE(sigaction(SIGXFSZ, &old_action, nullptr) == 0);
  CHECK_THAT(status.error, Catch::Contains("writing " + path));
  CHECK(lab.read(*lab.data, 15 * 16384, 16384) == a);
  // What reached the file is a recording cut short: refused as truncated.
  const auto file = file_bytes(path);
  CHECK(file.size() <= 64 * 1024);
  CHECK_THROWS_WITH(read_recording(file), Catch::Contains("truncated"));
}

}  // namespace recorder_test
