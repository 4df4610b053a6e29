// SPDX-License-Identifier: BSD-3-Clause
// FrameEncoder: appends the frames of a recording (recording_format.h) to a
// FrameBuffer, numbering them. Pure: whoever owns the buffer writes it out.
// Each append adds one whole frame (a base longer than kBaseChunk several)
// or throws std::invalid_argument and adds nothing: an export the header
// does not have, a write longer than kMaxWrite.
//
// A write frame can also be appended in two steps, for a caller that must
// number frames in order under its lock but would rather copy and checksum
// a write's bytes outside it (the server's recorder): begin_write appends
// the frame with its head and fields, finish_write copies the bytes in and
// seals the frame with its crc. Until then the frame is not valid; the
// buffer must not move in between (FrameBuffer::reserve).
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "fscore/record/frame_buffer.h"
#include "fscore/record/recording_format.h"

namespace fscore::record {

class FrameEncoder {
 public:
  using Buffer = FrameBuffer;

  // A write frame appended by begin_write, its bytes still to come.
  struct OpenWrite {
    std::uint8_t* frame = nullptr;  // where it starts in the buffer
    std::uint32_t length = 0;       // the write's bytes
  };

  // The header frame: at most kMaxExports exports, each named.
  void header(Buffer& out, const std::vector<ExportInfo>& exports);
  void base(Buffer& out, std::uint8_t device, std::uint64_t offset, const void* data, std::uint64_t length);
  // The export held old data (old_data.h) over [offset, offset + length),
  // whole sectors: a frame per kBaseChunk, without the bytes.
  void base_old_data(Buffer& out, std::uint8_t device, std::uint64_t offset, std::uint64_t length);
  void write(Buffer& out, std::uint8_t device, std::uint64_t id, std::uint64_t offset, const void* data,
             std::uint32_t length, bool fua);
  OpenWrite begin_write(Buffer& out, std::uint8_t device, std::uint64_t id, std::uint64_t offset,
                        std::uint32_t length, bool fua);
  static void finish_write(const OpenWrite& open, const void* data);
  void zero(Buffer& out, std::uint8_t device, std::uint64_t id, std::uint64_t offset, std::uint32_t length, bool fua);
  void trim(Buffer& out, std::uint8_t device, std::uint64_t id, std::uint64_t offset, std::uint32_t length, bool fua);
  void ack(Buffer& out, std::uint8_t device, std::uint64_t id, bool durable);
  void failed(Buffer& out, std::uint8_t device, std::uint64_t id);
  void flush(Buffer& out, std::uint8_t device, std::uint64_t id);
  void flush_done(Buffer& out, std::uint8_t device, std::uint64_t id);
  void mark(Buffer& out, std::uint64_t time_ns, std::string_view label);
  // A pad frame that ends the recording on a multiple of `block` bytes (a
  // power of two), `at` being where the frame starts in the recording: 20
  // bytes and up to block - 1 zeroes.
  void pad(Buffer& out, std::uint64_t at, std::size_t block);
  // The last frame; `stopped_because` non-empty when an error ended it.
  void end(Buffer& out, std::string_view stopped_because = {});

  // Frames appended so far, the header included.
  std::uint64_t frames() const { return next_sequence_; }

 private:
  static constexpr std::size_t kWriteFixedBytes = 16;  // a write's id and offset

  // One frame: the 16-byte head, the payload's parts, the crc.
  void frame(Buffer& out, FrameKind kind, std::uint8_t device, std::uint16_t flags, const void* fixed,
             std::size_t fixed_length, const void* data, std::size_t data_length);
  // Appends a frame's head and fixed fields, numbered, with room for
  // `data_length` bytes and the crc after them; returns where it starts.
  std::uint8_t* open(Buffer& out, FrameKind kind, std::uint8_t device, std::uint16_t flags, const void* fixed,
                     std::size_t fixed_length, std::size_t data_length);
  // Copies the data into an opened frame and writes its crc.
  static void seal(std::uint8_t* frame, std::size_t fixed_length, const void* data, std::size_t data_length);
  void change(Buffer& out, FrameKind kind, std::uint8_t device, std::uint64_t id, std::uint64_t offset,
              std::uint32_t length, bool fua);
  void id_only(Buffer& out, FrameKind kind, std::uint8_t device, std::uint16_t flags, std::uint64_t id);
  void check_device(std::uint8_t device) const;

  std::uint64_t next_sequence_ = 0;
  std::size_t exports_ = 0;  // from the header
};

}  // namespace fscore::record
