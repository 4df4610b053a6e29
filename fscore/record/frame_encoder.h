// FrameEncoder: appends the frames of a recording (recording_format.h) to a
// byte buffer, numbering them. Pure: whoever owns the buffer writes it out.
// Each append adds one whole frame (a base longer than kBaseChunk several)
// or throws std::invalid_argument and adds nothing: an export the header
// does not have, a write longer than kMaxWrite.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "fscore/record/recording_format.h"

namespace fscore::record {

class FrameEncoder {
 public:
  using Buffer = std::vector<std::uint8_t>;

  // The header frame: at most kMaxExports exports, each named.
  void header(Buffer& out, const std::vector<ExportInfo>& exports);
  void base(Buffer& out, std::uint8_t device, std::uint64_t offset, const void* data, std::uint64_t length);
  void write(Buffer& out, std::uint8_t device, std::uint64_t id, std::uint64_t offset, const void* data,
             std::uint32_t length, bool fua);
  void zero(Buffer& out, std::uint8_t device, std::uint64_t id, std::uint64_t offset, std::uint32_t length, bool fua);
  void trim(Buffer& out, std::uint8_t device, std::uint64_t id, std::uint64_t offset, std::uint32_t length, bool fua);
  void ack(Buffer& out, std::uint8_t device, std::uint64_t id, bool durable);
  void failed(Buffer& out, std::uint8_t device, std::uint64_t id);
  void flush(Buffer& out, std::uint8_t device, std::uint64_t id);
  void flush_done(Buffer& out, std::uint8_t device, std::uint64_t id);
  void mark(Buffer& out, std::uint64_t time_ns, std::string_view label);
  // The last frame; `stopped_because` non-empty when an error ended it.
  void end(Buffer& out, std::string_view stopped_because = {});

  // Frames appended so far, the header included.
  std::uint64_t frames() const { return next_sequence_; }

 private:
  // One frame: the 16-byte head, the payload's parts, the crc.
  void frame(Buffer& out, FrameKind kind, std::uint8_t device, std::uint16_t flags, const void* fixed,
             std::size_t fixed_length, const void* data, std::size_t data_length);
  void change(Buffer& out, FrameKind kind, std::uint8_t device, std::uint64_t id, std::uint64_t offset,
              std::uint32_t length, bool fua);
  void id_only(Buffer& out, FrameKind kind, std::uint8_t device, std::uint16_t flags, std::uint64_t id);
  void check_device(std::uint8_t device) const;

  std::uint64_t next_sequence_ = 0;
  std::size_t exports_ = 0;  // from the header
};

}  // namespace fscore::record
