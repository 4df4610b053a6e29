// SPDX-License-Identifier: BSD-3-Clause
#include "fscore/record/frame_reader.h"

#include <algorithm>
#include <cstdio>

#include "fscore/crc32c.h"
#include "fscore/endian.h"
#include "fscore/record/old_data.h"

namespace fscore::record {

namespace {

std::string hex32(std::uint32_t v) {
  char text[16];
  std::snprintf(text, sizeof text, "0x%08x", v);
  return text;
}

// An old-data base frame's bytes are a span of old_data()'s buffer.
static_assert(kBaseChunk <= kOldDataSpan);

bool changes(FrameKind kind) {
  return kind == FrameKind::write || kind == FrameKind::zero || kind == FrameKind::trim;
}

}  // namespace

RecordingError::RecordingError(std::uint64_t offset, const std::string& what)
    : std::runtime_error(what), offset_(offset) {}

void FrameReader::fail(std::uint64_t at, std::uint64_t sequence, const std::string& what) const {
  throw RecordingError(at, "recording: byte " + std::to_string(at) + " (frame " + std::to_string(sequence) +
                               "): " + what);
}

FrameReader::FrameReader(std::span<const std::uint8_t> bytes) : bytes_(bytes) {
  if (bytes_.size() < kFrameHeaderBytes + kMagic.size() ||
      std::string_view(reinterpret_cast<const char*>(bytes_.data()) + kFrameHeaderBytes, kMagic.size()) != kMagic)
    fail(0, 0, "not a recording (no NVJREC header)");
  if (bytes_[0] != static_cast<std::uint8_t>(FrameKind::header))
    fail(0, 0, "the first frame is a " + std::string(to_string(static_cast<FrameKind>(bytes_[0]))) + ", not the header");
  read_frame();
}

Frame FrameReader::read_frame() {
  const std::uint64_t at = position_;
  const std::uint64_t left = bytes_.size() - at;
  if (left < kFrameHeaderBytes)
    fail(at, sequence_, "truncated: a frame's head needs 16 bytes, " + std::to_string(left) + " are left");
  const std::uint8_t* p = bytes_.data() + at;
  Frame f;
  f.at = at;
  f.kind = static_cast<FrameKind>(p[0]);
  f.device = p[1];
  f.flags = load_le<std::uint16_t>(p + 2);
  const std::uint32_t payload = load_le<std::uint32_t>(p + 4);
  f.sequence = load_le<std::uint64_t>(p + 8);
  if (payload > kMaxPayload)
    fail(at, sequence_, "a payload of " + std::to_string(payload) + " bytes (at most " + std::to_string(kMaxPayload) +
                            "): not a frame");
  const std::uint64_t whole = kFrameHeaderBytes + std::uint64_t{payload} + kFrameTrailerBytes;
  if (left < whole)
    fail(at, sequence_, "truncated: the frame needs " + std::to_string(whole) + " bytes, " + std::to_string(left) +
                            " are left");
  const std::uint32_t stored = load_le<std::uint32_t>(p + kFrameHeaderBytes + payload);
  const std::uint32_t computed = ~crc32c(~0u, p, kFrameHeaderBytes + payload);
  if (stored != computed) fail(at, sequence_, "checksum mismatch: stored " + hex32(stored) + ", computed " + hex32(computed));
  if (f.sequence != sequence_)
    fail(at, sequence_, "sequence number " + std::to_string(f.sequence) + " where " + std::to_string(sequence_) +
                            " was due (a frame lost or repeated)");
  decode(f, std::span<const std::uint8_t>(p + kFrameHeaderBytes, payload));
  position_ = at + whole;
  ++sequence_;
  return f;
}

void FrameReader::need(const Frame& f, std::size_t n, std::size_t fixed, bool exact) const {
  if (exact ? n != fixed : n < fixed)
    fail(f.at, f.sequence, "a " + std::string(to_string(f.kind)) + " frame's payload has " + std::to_string(n) +
                               " bytes, not " + (exact ? "" : "at least ") + std::to_string(fixed));
}

void FrameReader::allow_flags(const Frame& f, std::uint16_t allowed) const {
  if ((f.flags & ~allowed) != 0)
    fail(f.at, f.sequence, "unknown flags " + std::to_string(f.flags) + " on a " + std::string(to_string(f.kind)));
}

void FrameReader::decode_header(const Frame& f, std::span<const std::uint8_t> payload) {
  const std::uint8_t* p = payload.data();
  const std::size_t n = payload.size();
  if (f.sequence != 0 || f.device != kNoExport) fail(f.at, f.sequence, "a second header");
  need(f, n, 16, false);
  version_ = load_le<std::uint32_t>(p + 8);
  if (version_ < 1 || version_ > kVersion)
    fail(f.at, f.sequence, "version " + std::to_string(version_) + "; this nvjournal reads versions 1 to " +
                               std::to_string(kVersion));
  const std::size_t unit_bytes = version_ >= 2 ? 4 : 0;  // each export's atomic unit, after its name
  const std::uint32_t count = load_le<std::uint32_t>(p + 12);
  if (count == 0 || count > kMaxExports) fail(f.at, f.sequence, std::to_string(count) + " exports (1 to 8)");
  std::size_t at = 16;
  for (std::uint32_t i = 0; i < count; ++i) {
    if (n - at < 12) fail(f.at, f.sequence, "the header ends inside export " + std::to_string(i));
    ExportInfo e;
    e.size = load_le<std::uint64_t>(p + at);
    const std::uint32_t name = load_le<std::uint32_t>(p + at + 8);
    if (name == 0 || name > 255 || n - at - 12 < name)
      fail(f.at, f.sequence, "export " + std::to_string(i) + "'s name length " + std::to_string(name));
    e.name.assign(reinterpret_cast<const char*>(p + at + 12), name);
    at += 12 + name;
    if (unit_bytes > 0) {
      if (n - at < unit_bytes) fail(f.at, f.sequence, "the header ends inside export " + std::to_string(i));
      e.atomic_unit = load_le<std::uint32_t>(p + at);
      if (e.atomic_unit == 0 || e.atomic_unit % 512 != 0)
        fail(f.at, f.sequence, "export " + std::to_string(i) + "'s atomic unit " + std::to_string(e.atomic_unit) +
                                   " (whole 512-byte sectors)");
      at += unit_bytes;
    }
    exports_.push_back(std::move(e));
  }
  if (at != n) fail(f.at, f.sequence, std::to_string(n - at) + " bytes after the header's exports");
  allow_flags(f, 0);
}

void FrameReader::decode_base(Frame& f, std::span<const std::uint8_t> payload) {
  if (version_ < 3 || (f.flags & kOldData) == 0) {  // the bytes
    need(f, payload.size(), 8, false);
    allow_flags(f, 0);
    f.offset = load_le<std::uint64_t>(payload.data());
    f.data = payload.subspan(8);
    f.length = f.data.size();
    return;
  }
  need(f, payload.size(), 16, true);
  allow_flags(f, kOldData);
  f.offset = load_le<std::uint64_t>(payload.data());
  f.length = load_le<std::uint64_t>(payload.data() + 8);
  if (f.offset % kOldDataSector != 0 || f.length % kOldDataSector != 0 || f.length > kBaseChunk)
    fail(f.at, f.sequence, "old data of " + std::to_string(f.length) + " bytes at " + std::to_string(f.offset) +
                               " (whole sectors, at most " + std::to_string(kBaseChunk) + " bytes a frame)");
  f.data = old_data(static_cast<std::size_t>(f.length));
}

void FrameReader::decode(Frame& f, std::span<const std::uint8_t> payload) {
  if (f.kind == FrameKind::header) return decode_header(f, payload);
  const std::uint8_t* p = payload.data();
  const std::size_t n = payload.size();
  const std::string kind = to_string(f.kind);
  const bool exportless = f.kind == FrameKind::mark || f.kind == FrameKind::end || f.kind == FrameKind::pad;
  if (exportless ? f.device != kNoExport : f.device >= exports_.size())
    fail(f.at, f.sequence, "a " + kind + " frame of export " + std::to_string(f.device));
  switch (f.kind) {
    case FrameKind::base:
      decode_base(f, payload);
      break;
    case FrameKind::write:
      need(f, n, 16, false);
      allow_flags(f, kFua);
      f.id = load_le<std::uint64_t>(p);
      f.offset = load_le<std::uint64_t>(p + 8);
      f.data = payload.subspan(16);
      f.length = f.data.size();
      break;
    case FrameKind::zero:
    case FrameKind::trim:
      need(f, n, 20, true);
      allow_flags(f, kFua);
      f.id = load_le<std::uint64_t>(p);
      f.offset = load_le<std::uint64_t>(p + 8);
      f.length = load_le<std::uint32_t>(p + 16);
      break;
    case FrameKind::ack:
      need(f, n, 8, true);
      allow_flags(f, kDurable);
      f.id = load_le<std::uint64_t>(p);
      break;
    case FrameKind::failed:
    case FrameKind::flush:
    case FrameKind::flush_done:
      need(f, n, 8, true);
      allow_flags(f, 0);
      f.id = load_le<std::uint64_t>(p);
      break;
    case FrameKind::mark:
      need(f, n, 8, false);
      allow_flags(f, 0);
      if (n - 8 > kMaxLabel) fail(f.at, f.sequence, "a mark's label of " + std::to_string(n - 8) + " bytes");
      f.time_ns = load_le<std::uint64_t>(p);
      f.text = std::string_view(reinterpret_cast<const char*>(p + 8), n - 8);
      break;
    case FrameKind::end: {
      need(f, n, 8, false);
      allow_flags(f, kStopped);
      const std::uint64_t frames = load_le<std::uint64_t>(p);
      if (frames != f.sequence)
        fail(f.at, f.sequence, "the end frame counts " + std::to_string(frames) + " frames before it, not " +
                                   std::to_string(f.sequence));
      f.text = std::string_view(reinterpret_cast<const char*>(p + 8), n - 8);
      if (((f.flags & kStopped) != 0) == f.text.empty())
        fail(f.at, f.sequence, "an end frame's stop flag and reason disagree");
      break;
    }
    case FrameKind::pad:
      allow_flags(f, 0);
      if (std::any_of(payload.begin(), payload.end(), [](std::uint8_t b) { return b != 0; }))
        fail(f.at, f.sequence, "a pad frame that is not all zeroes");
      break;
    default:
      fail(f.at, f.sequence, "unknown frame kind " + std::to_string(static_cast<unsigned>(f.kind)));
  }
  if (f.kind == FrameKind::base || changes(f.kind)) {
    const std::uint64_t size = exports_[f.device].size;
    if (f.length == 0 || f.offset > size || f.length > size - f.offset)
      fail(f.at, f.sequence, "a " + kind + " of " + std::to_string(f.length) + " bytes at " + std::to_string(f.offset) +
                                 " outside export " + exports_[f.device].name + " (" + std::to_string(size) +
                                 " bytes)");
  }
}

std::optional<Frame> FrameReader::next() {
  if (ended_) return std::nullopt;
  Frame f;
  do {  // pad frames are checked and passed over
    if (position_ == bytes_.size())
      throw RecordingError(position_, "recording: truncated after byte " + std::to_string(position_) + " (frame " +
                                          std::to_string(sequence_ - 1) + "): no end frame");
    f = read_frame();
  } while (f.kind == FrameKind::pad);
  if (f.kind == FrameKind::end) {
    ended_ = true;
    stopped_ = (f.flags & kStopped) != 0;
    stop_reason_ = std::string(f.text);
    if (position_ != bytes_.size())
      fail(position_, sequence_, std::to_string(bytes_.size() - position_) + " bytes after the end frame");
  }
  return f;
}

}  // namespace fscore::record
