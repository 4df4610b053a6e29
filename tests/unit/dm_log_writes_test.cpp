// SPDX-License-Identifier: BSD-3-Clause
// dm-log-writes logs (fscore/dmlog/) and the crash lab's import and export
// of them (crashlab/record/log_import.h, crashlab/record/log_export.h): the format written and
// read back, every malformed log refused with the entry named, each kind
// of entry as the frames a recording holds, the export's order (a write
// acknowledged during a flush comes after it), and round trips that keep
// every crash state: over random recordings sent one change at a time, the
// states of export-then-import have the very fingerprints of the original.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "crashlab/states/crash_points.h"
#include "crashlab/states/crash_states.h"
#include "crashlab/record/log_export.h"
#include "crashlab/record/log_import.h"
#include "crashlab/index/recording_index.h"
#include "fscore/dmlog/log_reader.h"
#include "fscore/dmlog/log_writer.h"
#include "fscore/endian.h"
#include "fscore/record/frame_encoder.h"
#include "tests/support/memory_sink.h"

namespace dm_log_writes_test {

namespace {

using namespace fscore::dmlog;
using Bytes = std::vector<std::uint8_t>;

using Memory = nvj::test::MemorySink;

Bytes filled(std::size_t n, std::uint8_t v) { return Bytes(n, v); }

// A log of every kind of entry, sector size `s`.
Bytes sample_log(std::uint32_t s) {
  Memory m;
  LogWriter w(m, s);
  w.write(0, filled(s, 'a'));
  w.flush();
  w.write(2, filled(2 * s, 'b'), kFua);
  w.discard(8, 4);
  w.mark("fact entry . x");
  w.write(1, filled(s, 'c'), kFlush | kFua | kMetadata);
  w.finish();
  return m.bytes;
}

Bytes import(const std::vector<const LogReader*>& logs, std::uint64_t size,
             const std::optional<std::string>& start = std::nullopt) {
  std::vector<crashlab::LogSource> sources;
  const char* names[] = {"data", "journal"};
  for (std::size_t i = 0; i < logs.size(); ++i) sources.push_back({names[i], logs[i], size, nullptr});
  Bytes out;
  crashlab::import_logs(sources, start, [&](std::span<const std::uint8_t> b) { out.insert(out.end(), b.begin(), b.end()); });
  return out;
}

std::string error_of(const Bytes& log, const ReadOptions& options = {}) {
  try {
    LogReader r(log, options);
  } catch (const LogError& e) {
    return e.what();
  }
  return "no error";
}

// The fingerprints of a recording's unique crash states, in order.
std::vector<std::uint64_t> unique_prints(const Bytes& recording) {
  const crashlab::RecordingIndex index(recording);
  const auto points = crashlab::crash_points(index, {});
  std::vector<std::uint64_t> out;
  crashlab::enumerate_crash_states(index, points, {}, [&](const crashlab::CrashState& s) {
    if (s.first) out.push_back(s.fingerprint);
  });
  return out;
}

}  // namespace

TEST_CASE("a dm-log-writes log is read back as it was written", "[dmlog]") {
  for (const std::uint32_t s : {512u, 4096u}) {
    const Bytes log = sample_log(s);
    const LogReader r(log);
    CHECK(r.super().sectorsize == s);
    CHECK(r.super().nr_entries == 6);
    REQUIRE(r.entries().size() == 6);
    const auto& e = r.entries();
    CHECK((e[0].header.sector == 0 && e[0].data.size() == s && e[0].data[0] == 'a'));
    CHECK((e[1].header.flags == kFlush && e[1].data.empty()));
    CHECK((e[2].header.flags == kFua && e[2].header.nr_sectors == 2 && e[2].data.size() == 2 * s));
    CHECK((e[3].header.flags == kDiscard && e[3].header.nr_sectors == 4 && e[3].data.empty()));
    CHECK((e[4].header.flags == kMark && e[4].label == "fact entry . x" && e[4].header.data_len == 14));
    CHECK(describe_flags(e[5].header.flags) == "FLUSH|FUA|METADATA");
    CHECK(r.extent() == 12 * s);  // the discard of sectors 8..11
    // Entries follow one another: header, data; the next header after.
    CHECK(e[1].log_offset == e[0].log_offset + 2 * s);
    CHECK(e[4].log_offset == e[3].log_offset + s);
    CHECK(log.size() == (1 + 2 + 1 + 3 + 1 + 1 + 2) * s);
  }
  CHECK(describe_flags(0) == "none");
  CHECK(describe_flags(kMark | 0x40) == "MARK|0x40");
}

TEST_CASE("a malformed log is refused, naming the entry and what is wrong", "[dmlog]") {
  const Bytes good = sample_log(512);
  auto with = [&](std::size_t at, std::uint64_t v) {
    Bytes b = good;
    fscore::store_le(b.data() + at, v);
    return b;
  };
  CHECK_THAT(error_of(Bytes(100, 0)), Catch::Contains("shorter than its super block"));
  CHECK_THAT(error_of(with(0, 0x1234)), Catch::Contains("magic is 0x1234"));
  CHECK_THAT(error_of(with(8, 2)), Catch::Contains("version is 2"));
  {
    Bytes b = good;
    fscore::store_le(b.data() + 24, std::uint32_t{1000});
    CHECK_THAT(error_of(b), Catch::Contains("sector size is 1000"));
  }
  // More entries counted than the log holds: the header of entry 6 is past its end.
  CHECK_THAT(error_of(with(16, 7)), Catch::Contains("entry 6 (log byte 5632): the log ends in its header"));
  // Entry 2 (a FUA write of 2 sectors, header at sector 4) cut in its data.
  CHECK_THAT(error_of(Bytes(good.begin(), good.begin() + 5 * 512)),
             Catch::Contains("entry 2 (log byte 2048): its data (2 sectors) runs past the end of the log"));
  CHECK_THAT(error_of(with(2048 + 16, 0x40)), Catch::Contains("entry 2 (log byte 2048): unknown flags 0x40"));
  {
    Bytes b = with(1536 + 16, 0);  // entry 1, the flush: no flags, no sectors
    CHECK_THAT(error_of(b), Catch::Contains("entry 1 (log byte 1536): an empty entry"));
  }
  CHECK_THAT(error_of(with(4096 + 24, 480)), Catch::Contains("entry 4 (log byte 4096): a mark's label of 480 bytes"));
  CHECK_THAT(error_of(with(512 + 24, 7)), Catch::Contains("entry 0 (log byte 512): data length 7 on a none entry"));
  ReadOptions small;
  small.device_bytes = 8 * 512;  // the discard of sectors 8..11 is past it
  CHECK_THAT(error_of(good, small), Catch::Contains("entry 3 (log byte 3584): sectors 8..11 lie beyond the device's 8"));
}

TEST_CASE("entries past the count are found, and read only when asked", "[dmlog]") {
  const Bytes good = sample_log(512);
  Bytes cut = good;
  fscore::store_le(cut.data() + 16, std::uint64_t{4});  // a count not rewritten after the last two
  const LogReader r(cut);
  CHECK(r.entries().size() == 4);
  CHECK(r.uncounted() == 2);
  ReadOptions past;
  past.past_count = true;
  const LogReader all(cut, past);
  CHECK(all.entries().size() == 6);
  CHECK(all.entries().back().header.flags == (kFlush | kFua | kMetadata));
}

TEST_CASE("the writer refuses what the format cannot hold", "[dmlog]") {
  Memory m;
  CHECK_THROWS_WITH(LogWriter(m, 1000), Catch::Contains("a power of two"));
  LogWriter w(m, 512);
  CHECK_THROWS_WITH(w.write(0, filled(100, 1)), Catch::Contains("not whole sectors"));
  CHECK_THROWS_WITH(w.write(0, filled(512, 1), kDiscard), Catch::Contains("not DISCARD"));
  CHECK_THROWS_WITH(w.mark(std::string(480, 'x')), Catch::Contains("holds at most 479"));
  w.mark(std::string(479, 'x'));
  CHECK(w.entries() == 1);
}

TEST_CASE("each entry becomes the frames the server would have recorded", "[dmlog]") {
  const Bytes log = sample_log(512);
  const LogReader r(log);
  const Bytes rec = import({&r}, 1 << 20);
  const crashlab::RecordingIndex index(rec);
  REQUIRE(index.exports().size() == 1);
  CHECK(index.exports()[0].name == "data");
  CHECK(index.exports()[0].atomic_unit == 512);
  const auto& c = index.changes();
  REQUIRE(c.size() == 4);
  // The first write: volatile until the flush after it.
  CHECK((c[0].kind == fscore::record::FrameKind::write && c[0].offset == 0 && !c[0].durable_on_ack));
  REQUIRE(index.flushes().size() == 2);
  CHECK(c[0].durable == index.flushes()[0].done);
  // The FUA write: durable on its ack.
  CHECK((c[1].fua && c[1].durable_on_ack && c[1].offset == 1024 && c[1].length == 1024));
  // The discard: a trim, volatile until the flush of the last entry.
  CHECK((c[2].kind == fscore::record::FrameKind::trim && c[2].offset == 4096 && c[2].length == 2048));
  CHECK(c[2].durable == index.flushes()[1].done);
  // The flush before the last write completes before it; the write is FUA.
  CHECK((c[3].fua && c[3].durable_on_ack && index.flushes()[1].done < c[3].sequence));
  REQUIRE(index.marks().size() == 1);
  CHECK(index.marks()[0].label == "fact entry . x");
  // Crash points: the flush, the FUA write, the mark, the flush, the last write, the end.
  CHECK(crashlab::crash_points(index, {}).size() == 6);
}

TEST_CASE("the entries up to the start mark are the recording's base", "[dmlog]") {
  Memory m;
  LogWriter w(m, 512);
  w.write(0, filled(1024, 'm'));
  w.discard(1, 1);
  w.flush();
  w.mark("mkfs");
  w.write(4, filled(512, 'w'));
  w.finish();
  const LogReader r(m.bytes);
  const Bytes rec = import({&r}, 1 << 20, "mkfs");
  const crashlab::RecordingIndex index(rec);
  REQUIRE(index.bases().size() == 1);  // sector 0 only: sector 1 was discarded
  CHECK((index.bases()[0].offset == 0 && index.bases()[0].data.size() == 512 && index.bases()[0].data[0] == 'm'));
  REQUIRE(index.changes().size() == 1);
  CHECK(index.changes()[0].offset == 2048);
  CHECK(index.marks().empty());
  CHECK_THROWS_WITH(import({&r}, 1 << 20, "nope"), Catch::Contains("the data log has no mark 'nope'"));
  CHECK_THROWS_WITH(import({&r}, 2048, "mkfs"), Catch::Contains("does not hold what its log writes (up to byte 2560)"));
}

TEST_CASE("two logs are put in order at the marks both share, and checked only there", "[dmlog]") {
  Memory a, b;
  LogWriter wa(a, 512), wb(b, 512);
  wa.write(0, filled(512, 'd'));
  wa.mark("only-data");
  wb.write(0, filled(512, 'j'));
  wb.flush();
  wa.flush();
  wa.mark("fact entry . x");
  wb.mark("fact entry . x");
  wa.write(1, filled(512, 'e'));
  wb.write(1, filled(512, 'k'), kFua);
  wa.finish();
  wb.finish();
  const LogReader ra(a.bytes), rb(b.bytes);
  const Bytes rec = import({&ra, &rb}, 1 << 20);
  const crashlab::RecordingIndex index(rec);
  REQUIRE(index.marks().size() == 2);
  CHECK(index.marks()[0].label == crashlab::kMarksOnlyLabel);
  CHECK(index.marks()[1].label == "fact entry . x");
  CHECK(crashlab::marks_only(index));
  const auto points = crashlab::crash_points(index, {true, true, 1});
  REQUIRE(points.size() == 2);  // the shared mark and the end, whatever the options
  // At the mark: both devices' writes before it durable, nothing volatile.
  CHECK(points[0].volatile_changes.empty());
  CHECK(points[0].changes_before == 2);
  // At the end: the data write after the mark is volatile, the FUA write is not.
  REQUIRE(points[1].volatile_changes.size() == 1);
  CHECK(index.changes()[points[1].volatile_changes[0]].device == 0);
}

TEST_CASE("the export logs a write acknowledged during a flush after that flush, and no change never acknowledged", "[dmlog]") {
  fscore::record::FrameEncoder e;
  fscore::record::FrameBuffer out;
  e.header(out, {{"data", 1 << 20, 512}});
  const Bytes x = filled(512, 'x'), y = filled(512, 'y'), z = filled(512, 'z');
  e.write(out, 0, 1, 0, x.data(), 512, false);
  e.ack(out, 0, 1, false);
  e.write(out, 0, 2, 512, y.data(), 512, false);
  e.flush(out, 0, 3);       // covers write 1 only
  e.ack(out, 0, 2, false);  // acknowledged while the flush is in flight
  e.flush_done(out, 0, 3);
  e.mark(out, 7, "fact entry . y");
  e.write(out, 0, 4, 1024, z.data(), 512, true);  // never acknowledged
  e.end(out);
  const Bytes rec(out.data(), out.data() + out.size());
  const crashlab::RecordingIndex index(rec);
  Memory m;
  const auto stats = crashlab::export_log(index, 0, m);
  CHECK(stats.not_acknowledged == 1);
  const LogReader r(m.bytes);
  std::vector<std::string> seen;
  for (const auto& entry : r.entries())
    seen.push_back(entry.is(kMark) ? "mark " + entry.label
                   : entry.data.empty() ? describe_flags(entry.header.flags)
                                        : std::string(1, static_cast<char>(entry.data[0])));
  CHECK(seen == std::vector<std::string>{"FLUSH", "mark mkfs", "x", "FLUSH", "y", "mark fact entry . y",
                                         "mark dm-log-writes-end"});
  // Imported again: write 2 is not covered by the flush, as in the recording.
  const Bytes again = import({&r}, 1 << 20, "mkfs");
  const crashlab::RecordingIndex back(again);
  REQUIRE(back.changes().size() == 2);
  CHECK(back.changes()[0].durable != crashlab::kNever);
  CHECK(back.changes()[1].durable == crashlab::kNever);
  // Every state of the log is one of the recording's; the recording has
  // more (write 4 never acknowledged: volatile at the mark and the end).
  auto sorted = [](std::vector<std::uint64_t> v) {
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
    return v;
  };
  const auto from_log = sorted(unique_prints(again)), from_recording = sorted(unique_prints(rec));
  CHECK(from_log.size() < from_recording.size());
  CHECK(std::includes(from_recording.begin(), from_recording.end(), from_log.begin(), from_log.end()));
}

TEST_CASE("the export refuses what its sectors cannot hold, naming it", "[dmlog]") {
  fscore::record::FrameEncoder e;
  fscore::record::FrameBuffer out;
  e.header(out, {{"data", 1 << 20, 512}});
  const Bytes x = filled(512, 'x');
  e.write(out, 0, 1, 512, x.data(), 512, false);
  e.ack(out, 0, 1, false);
  e.mark(out, 1, std::string(600, 'f'));
  e.end(out);
  const Bytes rec(out.data(), out.data() + out.size());
  const crashlab::RecordingIndex index(rec);
  Memory m;
  crashlab::LogExportOptions big;
  big.sectorsize = 4096;
  CHECK_THROWS_WITH(crashlab::export_log(index, 0, m, big), Catch::Contains("change 1 at byte 512, 512 bytes: not on the log's sectors of 4096"));
  CHECK_THROWS_WITH(crashlab::export_log(index, 0, m), Catch::Contains("mark 0 ('ffff"));
  CHECK_THROWS_WITH(crashlab::export_log(index, 0, m), Catch::Contains("a larger --sector-size holds it"));
}

TEST_CASE("export then import keeps every crash state of a recording sent one change at a time", "[dmlog]") {
  for (std::uint64_t seed = 1; seed <= 40; ++seed) {
    std::mt19937_64 rng(seed);
    fscore::record::FrameEncoder e;
    fscore::record::FrameBuffer out;
    e.header(out, {{"data", 64 * 512, 512}});
    const Bytes base = filled(1024, 0x5A);
    e.base(out, 0, 0, base.data(), base.size());
    std::uint64_t id = 1;
    for (int step = 0; step < 24; ++step) {
      const auto pick = rng() % 10;
      if (pick < 6) {
        const Bytes data = filled(512 * (1 + rng() % 3), static_cast<std::uint8_t>('a' + rng() % 4));
        const bool fua = rng() % 5 == 0;
        e.write(out, 0, id, 512 * (rng() % 60), data.data(), static_cast<std::uint32_t>(data.size()), fua);
        e.ack(out, 0, id++, fua);
      } else if (pick == 6) {
        e.trim(out, 0, id, 512 * (rng() % 60), static_cast<std::uint32_t>(512 * (1 + rng() % 4)), false);
        e.ack(out, 0, id++, false);
      } else if (pick < 9) {
        e.flush(out, 0, id);
        e.flush_done(out, 0, id++);
      } else {
        e.mark(out, 0, "fact entry . m" + std::to_string(step));
      }
    }
    e.end(out);
    const Bytes rec(out.data(), out.data() + out.size());
    const crashlab::RecordingIndex index(rec);
    Memory m;
    crashlab::export_log(index, 0, m);
    const LogReader r(m.bytes);
    const Bytes again = import({&r}, 64 * 512, "mkfs");
    INFO("seed " << seed);
    const auto before = unique_prints(rec);
    CHECK(before.size() > 1);
    CHECK(unique_prints(again) == before);
    // And the log of the import is the log of the original, byte for byte.
    const crashlab::RecordingIndex back(again);
    Memory m2;
    crashlab::export_log(back, 0, m2);
    CHECK(m2.bytes == m.bytes);
  }
}

}  // namespace dm_log_writes_test
