// SPDX-License-Identifier: BSD-3-Clause
// FrameReader: the frames of a recording (recording_format.h), read from
// its bytes in memory (a mapped file) and checked as they are reached: the
// frame's length against the bytes there are, its crc32c, its sequence
// number, its kind, its export, its payload's size for its kind, its range
// against the export's size, and at the end the frame count and that
// nothing follows. Whatever is wrong is a RecordingError naming the byte
// offset of the frame and what was found; a recording without its end frame
// is truncated, and says after which byte. Pure.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "fscore/record/recording_format.h"

namespace fscore::record {

class RecordingError : public std::runtime_error {
 public:
  RecordingError(std::uint64_t offset, const std::string& what);
  // Where the frame that is wrong starts in the recording.
  std::uint64_t offset() const { return offset_; }

 private:
  std::uint64_t offset_;
};

// One frame, decoded. Which fields mean something depends on the kind.
struct Frame {
  FrameKind kind = FrameKind::header;
  std::uint8_t device = kNoExport;  // the export's index
  std::uint16_t flags = 0;
  std::uint64_t sequence = 0;
  std::uint64_t at = 0;      // the frame's byte offset in the recording
  std::uint64_t id = 0;      // write, zero, trim, ack, failed, flush, flush_done
  std::uint64_t offset = 0;  // base, write, zero, trim
  std::uint64_t length = 0;  // base, write, zero, trim: the bytes it covers
  std::uint64_t time_ns = 0;           // mark
  std::span<const std::uint8_t> data;  // base, write: the bytes (old data: a span of old_data())
  std::string_view text;               // mark: the label; end: why it stopped

  bool fua() const { return (flags & kFua) != 0; }
  bool durable() const { return (flags & kDurable) != 0; }
  bool old_data() const { return kind == FrameKind::base && (flags & kOldData) != 0; }
};

class FrameReader {
 public:
  // Reads and checks the header; the bytes must outlive the reader.
  explicit FrameReader(std::span<const std::uint8_t> bytes);

  std::uint32_t version() const { return version_; }
  const std::vector<ExportInfo>& exports() const { return exports_; }

  // The next frame after the header, checked; nullopt once the end frame
  // has been returned. Pad frames are checked and never returned.
  std::optional<Frame> next();

  // After the end frame: whether an error stopped the recording, and why.
  bool stopped() const { return stopped_; }
  const std::string& stop_reason() const { return stop_reason_; }
  // Where the next frame starts.
  std::uint64_t position() const { return position_; }

 private:
  Frame read_frame();
  void decode(Frame& f, std::span<const std::uint8_t> payload);
  // A base frame: its bytes, or (version 3, kOldData) a range of old data,
  // its bytes old_data()'s.
  void decode_base(Frame& f, std::span<const std::uint8_t> payload);
  // The header frame: the version and the exports.
  void decode_header(const Frame& f, std::span<const std::uint8_t> payload);
  // A payload of exactly (or at least) `fixed` bytes; only `allowed` flags.
  void need(const Frame& f, std::size_t n, std::size_t fixed, bool exact) const;
  void allow_flags(const Frame& f, std::uint16_t allowed) const;
  [[noreturn]] void fail(std::uint64_t at, std::uint64_t sequence, const std::string& what) const;

  std::span<const std::uint8_t> bytes_;
  std::uint64_t position_ = 0;
  std::uint64_t sequence_ = 0;  // the next frame's
  std::uint32_t version_ = 0;
  std::vector<ExportInfo> exports_;
  bool ended_ = false;
  bool stopped_ = false;
  std::string stop_reason_;
};

}  // namespace fscore::record
