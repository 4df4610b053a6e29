// SPDX-License-Identifier: BSD-3-Clause
// The recording's frames (fscore/record/): what the encoder writes the reader
// reads back field for field, and a recording damaged anywhere (any byte
// changed, cut at any length, bytes added) is refused with an error naming
// the byte offset of the frame where the damage is.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "fscore/crc32c.h"
#include "fscore/endian.h"
#include "fscore/record/frame_encoder.h"
#include "fscore/record/frame_reader.h"
#include "fscore/record/old_data.h"

namespace recording_format_test {

using fscore::record::ExportInfo;
using fscore::record::Frame;
using fscore::record::FrameBuffer;
using fscore::record::FrameEncoder;
using fscore::record::FrameKind;
using fscore::record::FrameReader;
using fscore::record::RecordingError;

namespace {

using Bytes = std::vector<std::uint8_t>;

Bytes copy(const FrameBuffer& b) { return Bytes(b.data(), b.data() + b.size()); }

// A small recording of every kind of frame, and where each frame starts.
struct Sample {
  Bytes bytes;
  std::vector<std::size_t> starts;
};

Sample sample(std::string_view stopped = {}) {
  Sample s;
  FrameEncoder e;
  FrameBuffer out;
  auto at = [&] { s.starts.push_back(out.size()); };
  at();
  e.header(out, {{"data", 1 << 20, 4096}, {"journal", 64 << 10, 512}});
  const std::string base(5000, 'b');
  at();
  e.base(out, 0, 4096, base.data(), base.size());
  at();
  e.write(out, 1, 7, 512, "journal block", 13, true);
  at();
  e.zero(out, 0, 8, 8192, 4096, false);
  at();
  e.trim(out, 0, 9, 65536, 8192, true);
  at();
  e.ack(out, 1, 7, true);
  at();
  e.ack(out, 0, 8, false);
  at();
  e.failed(out, 0, 9);
  at();
  e.flush(out, 0, 10);
  at();
  e.flush_done(out, 0, 10);
  at();
  e.mark(out, 123456789, "file a size 13");
  at();
  e.end(out, stopped);
  s.bytes = copy(out);
  return s;
}

std::vector<Frame> read_all(const Bytes& bytes) {
  FrameReader r(bytes);
  std::vector<Frame> frames;
  while (auto f = r.next()) frames.push_back(*f);
  return frames;
}

// The offset a reading of `bytes` fails at; -1 if it does not fail.
std::int64_t failure_offset(const Bytes& bytes, std::string* what = nullptr) {
  try {
    read_all(bytes);
  } catch (const RecordingError& e) {
    if (what != nullptr) *what = e.what();
    return static_cast<std::int64_t>(e.offset());
  }
  return -1;
}

// Sets a frame's crc again after a change to its bytes.
void reseal(Bytes& bytes, std::size_t at) {
  const std::size_t covered = 16 + fscore::load_le<std::uint32_t>(bytes.data() + at + 4);
  fscore::store_le<std::uint32_t>(bytes.data() + at + covered, ~fscore::crc32c(~0u, bytes.data() + at, covered));
}

}  // namespace

TEST_CASE("a recording's frames read back as they were written", "[recording]") {
  const Sample s = sample();
  FrameReader r(s.bytes);
  CHECK(r.version() == 3);
  REQUIRE(r.exports().size() == 2);
  CHECK(r.exports()[0].name == "data");
  CHECK(r.exports()[0].size == 1 << 20);
  CHECK(r.exports()[0].atomic_unit == 4096);
  CHECK(r.exports()[1].name == "journal");
  CHECK(r.exports()[1].size == 64 << 10);
  CHECK(r.exports()[1].atomic_unit == 512);

  std::vector<Frame> f;
  while (auto next = r.next()) f.push_back(*next);
  // The 5000-byte base fits one frame (bases are cut at 1 MiB).
  REQUIRE(f.size() == s.starts.size() - 1);
  for (std::size_t i = 0; i < f.size(); ++i) {
    CAPTURE(i);
    CHECK(f[i].sequence == i + 1);
    CHECK(f[i].at == s.starts[i + 1]);
  }
  CHECK(f[0].kind == FrameKind::base);
  CHECK(f[0].offset == 4096);
  CHECK(f[0].length == 5000);
  CHECK(std::string(f[0].data.begin(), f[0].data.end()) == std::string(5000, 'b'));
  CHECK(f[1].kind == FrameKind::write);
  CHECK(f[1].device == 1);
  CHECK(f[1].id == 7);
  CHECK(f[1].offset == 512);
  CHECK(f[1].fua());
  CHECK(std::string(f[1].data.begin(), f[1].data.end()) == "journal block");
  CHECK(f[2].kind == FrameKind::zero);
  CHECK((f[2].id == 8 && f[2].offset == 8192 && f[2].length == 4096 && !f[2].fua()));
  CHECK(f[3].kind == FrameKind::trim);
  CHECK((f[3].id == 9 && f[3].offset == 65536 && f[3].length == 8192 && f[3].fua()));
  CHECK((f[4].kind == FrameKind::ack && f[4].id == 7 && f[4].durable() && f[4].device == 1));
  CHECK((f[5].kind == FrameKind::ack && f[5].id == 8 && !f[5].durable()));
  CHECK((f[6].kind == FrameKind::failed && f[6].id == 9));
  CHECK((f[7].kind == FrameKind::flush && f[7].id == 10));
  CHECK((f[8].kind == FrameKind::flush_done && f[8].id == 10));
  CHECK(f[9].kind == FrameKind::mark);
  CHECK(f[9].time_ns == 123456789);
  CHECK(f[9].text == "file a size 13");
  CHECK(f[10].kind == FrameKind::end);
  CHECK_FALSE(r.stopped());
  CHECK_FALSE(r.next().has_value());
  CHECK(r.position() == s.bytes.size());
}

TEST_CASE("a version 1 recording, without atomic units, reads with 512 for each export", "[recording]") {
  // Its header by hand: magic, version 1, one export (size, name), no unit.
  Bytes fixed(8 + 8 + 12 + 4);
  std::copy(fscore::record::kMagic.begin(), fscore::record::kMagic.end(), fixed.begin());
  fscore::store_le<std::uint32_t>(fixed.data() + 8, 1);
  fscore::store_le<std::uint32_t>(fixed.data() + 12, 1);
  fscore::store_le<std::uint64_t>(fixed.data() + 16, 1 << 20);
  fscore::store_le<std::uint32_t>(fixed.data() + 24, 4);
  std::copy_n("data", 4, fixed.begin() + 28);
  Bytes bytes(16 + fixed.size() + 4);
  bytes[0] = static_cast<std::uint8_t>(FrameKind::header);
  bytes[1] = fscore::record::kNoExport;
  fscore::store_le<std::uint32_t>(bytes.data() + 4, static_cast<std::uint32_t>(fixed.size()));
  std::copy(fixed.begin(), fixed.end(), bytes.begin() + 16);
  fscore::store_le<std::uint32_t>(bytes.data() + 16 + fixed.size(), ~fscore::crc32c(~0u, bytes.data(), 16 + fixed.size()));
  FrameEncoder rest;  // an end frame after it: sequence 1, one frame before it
  FrameBuffer scratch;
  rest.header(scratch, {{"data", 1 << 20}});
  FrameBuffer end;
  rest.end(end, {});
  bytes.insert(bytes.end(), end.data(), end.data() + end.size());
  FrameReader r(bytes);
  CHECK(r.version() == 1);
  REQUIRE(r.exports().size() == 1);
  CHECK((r.exports()[0].name == "data" && r.exports()[0].size == 1 << 20 && r.exports()[0].atomic_unit == 512));
  while (r.next()) {
  }
  CHECK(r.position() == bytes.size());

  FrameEncoder e;
  FrameBuffer out;
  CHECK_THROWS_WITH(e.header(out, {{"data", 1 << 20, 1000}}), Catch::Contains("not whole 512-byte sectors"));
  CHECK(out.size() == 0);
}

TEST_CASE("a base longer than a chunk is cut into frames, and a stopped recording says why", "[recording]") {
  FrameBuffer bytes;
  FrameEncoder e;
  e.header(bytes, {{"data", 8 << 20}});
  const std::string big((1 << 20) + 100, 'x');
  e.base(bytes, 0, 1000, big.data(), big.size());
  e.end(bytes, "the recording could not keep up");
  FrameReader r(bytes.bytes());
  auto a = r.next();
  auto b = r.next();
  REQUIRE((a && b));
  CHECK((a->offset == 1000 && a->length == 1 << 20));
  CHECK((b->offset == 1000 + (1 << 20) && b->length == 100));
  REQUIRE(r.next().has_value());  // the end
  CHECK(r.stopped());
  CHECK(r.stop_reason() == "the recording could not keep up");
  CHECK(e.frames() == 4);
}

TEST_CASE("old data in the base is kept as its range and read back as old data's bytes; refused where wrong",
          "[recording]") {
  FrameBuffer out;
  FrameEncoder e;
  e.header(out, {{"data", 8 << 20}});
  const std::size_t first = out.size();
  e.base_old_data(out, 0, 4096, (1 << 20) + 1024);
  e.end(out, {});
  CHECK(out.size() < 200);
  const Bytes good = copy(out);
  const std::vector<Frame> f = read_all(good);
  REQUIRE(f.size() == 3);
  CHECK((f[0].old_data() && f[0].offset == 4096 && f[0].length == 1 << 20 && f[0].data.size() == 1 << 20));
  CHECK((f[1].old_data() && f[1].offset == 4096 + (1 << 20) && f[1].length == 1024));
  CHECK(fscore::record::is_old_data(f[0].data));
  CHECK(std::string(f[1].data.begin(), f[1].data.begin() + 19) == "nvjournal: old data");
  CHECK_FALSE(fscore::record::is_old_data(std::vector<std::uint8_t>(512, 0)));

  std::string what;
  Bytes bad = good;  // a length of no whole sectors
  fscore::store_le<std::uint64_t>(bad.data() + first + 16 + 8, 1000);
  reseal(bad, first);
  CHECK(failure_offset(bad, &what) == static_cast<std::int64_t>(first));
  CHECK_THAT(what, Catch::Contains("old data of 1000 bytes at 4096 (whole sectors"));
  bad = good;  // more than a frame may cover
  fscore::store_le<std::uint64_t>(bad.data() + first + 16 + 8, 2 << 20);
  reseal(bad, first);
  CHECK(failure_offset(bad, &what) == static_cast<std::int64_t>(first));
  bad = good;  // past the export's end
  fscore::store_le<std::uint64_t>(bad.data() + first + 16, (8 << 20) - 512);
  reseal(bad, first);
  CHECK(failure_offset(bad, &what) == static_cast<std::int64_t>(first));
  CHECK_THAT(what, Catch::Contains("outside export data"));
  bad = good;  // a version 2 recording has no old data
  fscore::store_le<std::uint32_t>(bad.data() + 16 + 8, 2);
  reseal(bad, 0);
  CHECK(failure_offset(bad, &what) == static_cast<std::int64_t>(first));
  CHECK_THAT(what, Catch::Contains("unknown flags 1 on a base"));

  FrameBuffer none;
  FrameEncoder refuses;
  refuses.header(none, {{"data", 8 << 20}});
  const std::size_t size = none.size();
  CHECK_THROWS_WITH(refuses.base_old_data(none, 0, 100, 512), Catch::Contains("not whole sectors"));
  CHECK(none.size() == size);
}

TEST_CASE("the encoder refuses what the format cannot hold, and adds nothing", "[recording]") {
  FrameBuffer bytes;
  FrameEncoder e;
  CHECK_THROWS_WITH(e.mark(bytes, 0, "x"), Catch::Contains("before the header"));
  CHECK_THROWS_WITH(e.header(bytes, {}), Catch::Contains("1 to 8 exports"));
  e.header(bytes, {{"data", 4096}});
  const std::size_t size = bytes.size();
  CHECK_THROWS_WITH(e.header(bytes, {{"data", 4096}}), Catch::Contains("first frame"));
  CHECK_THROWS_WITH(e.ack(bytes, 1, 1, true), Catch::Contains("export 1 is not in the header"));
  CHECK_THROWS_WITH(e.mark(bytes, 0, std::string(4097, 'l')), Catch::Contains("at most 4096 bytes"));
  CHECK_THROWS_WITH(e.write(bytes, 0, 1, 0, nullptr, (64u << 20) + 1, false), Catch::Contains("at most"));
  CHECK(bytes.size() == size);
  CHECK(e.frames() == 1);
}

TEST_CASE("any changed byte is refused at the frame that holds it", "[recording]") {
  const Sample s = sample("stopped for the test");
  REQUIRE(failure_offset(s.bytes) == -1);
  for (std::size_t i = 0; i < s.bytes.size(); ++i) {
    // The frame the byte belongs to.
    std::size_t frame = 0;
    while (frame + 1 < s.starts.size() && s.starts[frame + 1] <= i) ++frame;
    for (std::uint8_t flip : {std::uint8_t{0x01}, std::uint8_t{0x80}}) {
      Bytes damaged = s.bytes;
      damaged[i] ^= flip;
      std::string what;
      CAPTURE(i, flip);
      CHECK(failure_offset(damaged, &what) == static_cast<std::int64_t>(s.starts[frame]));
      CHECK_THAT(what, Catch::StartsWith("recording: byte " + std::to_string(s.starts[frame]) + " "));
    }
  }
}

TEST_CASE("a recording cut short is refused as truncated, naming where", "[recording]") {
  const Sample s = sample();
  for (std::size_t n = 0; n < s.bytes.size(); ++n) {
    CAPTURE(n);
    const Bytes cut(s.bytes.begin(), s.bytes.begin() + static_cast<std::ptrdiff_t>(n));
    std::string what;
    const std::int64_t at = failure_offset(cut, &what);
    // Cut inside a frame: that frame; cut between frames: no end frame, after the last whole one.
    std::size_t frame = 0;
    while (frame + 1 < s.starts.size() && s.starts[frame + 1] <= n) ++frame;
    CHECK(at == static_cast<std::int64_t>(s.starts[frame]));
    if (n >= 24) CHECK_THAT(what, Catch::Contains("truncated"));
  }
  Bytes longer = s.bytes;
  longer.push_back(0);
  std::string what;
  CHECK(failure_offset(longer, &what) == static_cast<std::int64_t>(s.bytes.size()));
  CHECK_THAT(what, Catch::Contains("1 bytes after the end frame"));
}

TEST_CASE("frames out of place are refused", "[recording]") {
  FrameBuffer bytes;
  FrameEncoder e;
  e.header(bytes, {{"data", 4096}});
  const std::size_t second = bytes.size();
  e.write(bytes, 0, 1, 4090, "0123456789", 10, false);  // ends past 4096
  e.end(bytes);
  std::string what;
  CHECK(failure_offset(copy(bytes), &what) == static_cast<std::int64_t>(second));
  CHECK_THAT(what, Catch::Contains("outside export data (4096 bytes)"));

  // Two recordings spliced: the second's header is a second header.
  FrameBuffer first, second_recording;
  FrameEncoder a, b;
  a.header(first, {{"data", 4096}});
  b.header(second_recording, {{"data", 4096}});
  b.end(second_recording);
  Bytes one = copy(first);
  const Bytes two = copy(second_recording);
  one.insert(one.end(), two.begin(), two.end());
  CHECK(failure_offset(one, &what) == static_cast<std::int64_t>(second));  // the first header is as long
  CHECK_THAT(what, Catch::Contains("sequence number 0 where 1 was due"));

  CHECK(failure_offset(Bytes{'h', 'e', 'l', 'l', 'o'}, &what) == 0);
  CHECK_THAT(what, Catch::Contains("not a recording"));
}

TEST_CASE("pad frames end a batch on a block and are passed over by the reader", "[recording]") {
  // From every kind of place in a block, including those too close to its
  // end for an empty frame (20 bytes): then the pad runs on to the next one.
  for (std::size_t start : {4096u, 4097u, 6000u, 8172u, 8173u, 8175u, 8191u, 8192u}) {
    CAPTURE(start);
    FrameBuffer bytes;
    FrameEncoder e;
    e.header(bytes, {{"data", 1 << 20}});
    const std::size_t fill = start - bytes.size() - 36;  // a write frame is 36 bytes and its data
    e.write(bytes, 0, 1, 0, std::string(fill, 'f').data(), static_cast<std::uint32_t>(fill), false);
    REQUIRE(bytes.size() == start);
    e.pad(bytes, start, 4096);
    CHECK(bytes.size() % 4096 == 0);
    CHECK(bytes.size() - start >= 20);
    CHECK(bytes.size() - start < 4096 + 20);
    e.mark(bytes, 5, "after the pad");
    e.end(bytes);
    FrameReader r(bytes.bytes());
    std::vector<FrameKind> kinds;
    while (auto f = r.next()) kinds.push_back(f->kind);
    CHECK(kinds == std::vector<FrameKind>{FrameKind::write, FrameKind::mark, FrameKind::end});
  }
}

TEST_CASE("a pad that is not zeroes is refused", "[recording]") {
  FrameBuffer bytes;
  FrameEncoder e;
  e.header(bytes, {{"data", 4096}});
  const std::size_t at = bytes.size();
  e.pad(bytes, at, 64);
  e.end(bytes);
  Bytes damaged = copy(bytes);
  damaged[at + 16] = 7;
  // Mend the crc so that only the content is wrong.
  const std::size_t payload = fscore::load_le<std::uint32_t>(damaged.data() + at + 4);
  const std::uint32_t crc = ~fscore::crc32c(~0u, damaged.data() + at, 16 + payload);
  fscore::store_le<std::uint32_t>(damaged.data() + at + 16 + payload, crc);
  std::string what;
  CHECK(failure_offset(damaged, &what) == static_cast<std::int64_t>(at));
  CHECK_THAT(what, Catch::Contains("a pad frame that is not all zeroes"));
}

TEST_CASE("a write frame begun and finished later equals one written at once", "[recording]") {
  FrameBuffer whole, split;
  FrameEncoder a, b;
  a.header(whole, {{"data", 1 << 20}});
  b.header(split, {{"data", 1 << 20}});
  const std::string data(10000, 'w');
  a.write(whole, 0, 3, 8192, data.data(), static_cast<std::uint32_t>(data.size()), true);
  split.reserve(1 << 16);
  const FrameEncoder::OpenWrite open = b.begin_write(split, 0, 3, 8192, static_cast<std::uint32_t>(data.size()), true);
  b.ack(split, 0, 3, false);  // frames after it, before its bytes are in
  a.ack(whole, 0, 3, false);
  FrameEncoder::finish_write(open, data.data());
  CHECK(copy(whole) == copy(split));
}

TEST_CASE("a frame buffer is aligned, keeps its bytes as it grows, and does not move within its reserve",
          "[recording]") {
  FrameBuffer b;
  CHECK(b.empty());
  std::uint8_t* first = b.extend(3);
  first[0] = 1, first[1] = 2, first[2] = 3;
  CHECK(reinterpret_cast<std::uintptr_t>(b.data()) % FrameBuffer::kAlignment == 0);
  b.extend(100000)[99999] = 9;  // grows: moves, keeps what was there
  CHECK(reinterpret_cast<std::uintptr_t>(b.data()) % FrameBuffer::kAlignment == 0);
  CHECK((b.data()[0] == 1 && b.data()[2] == 3 && b.data()[100002] == 9));
  b.reserve(1 << 20);
  const std::uint8_t* kept = b.data();
  while (b.size() + 4096 <= (1u << 20)) b.extend(4096);
  CHECK(b.data() == kept);
  CHECK(b.capacity() == 1u << 20);
  b.clear();
  CHECK((b.size() == 0 && b.capacity() == 1u << 20));
  FrameBuffer other;
  other.swap(b);
  CHECK((b.capacity() == 0 && other.data() == kept));
}

}  // namespace recording_format_test
