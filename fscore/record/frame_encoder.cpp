// SPDX-License-Identifier: BSD-3-Clause
#include "fscore/record/frame_encoder.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>

#include "fscore/crc32c.h"
#include "fscore/endian.h"
#include "fscore/record/old_data.h"

namespace fscore::record {

const char* to_string(FrameKind kind) {
  switch (kind) {
    case FrameKind::header: return "header";
    case FrameKind::base: return "base";
    case FrameKind::write: return "write";
    case FrameKind::zero: return "zero";
    case FrameKind::trim: return "trim";
    case FrameKind::ack: return "ack";
    case FrameKind::failed: return "failed";
    case FrameKind::flush: return "flush";
    case FrameKind::flush_done: return "flush_done";
    case FrameKind::mark: return "mark";
    case FrameKind::end: return "end";
    case FrameKind::pad: return "pad";
  }
  return "unknown";
}

std::uint8_t* FrameEncoder::open(Buffer& out, FrameKind kind, std::uint8_t device, std::uint16_t flags,
                                 const void* fixed, std::size_t fixed_length, std::size_t data_length) {
  const std::size_t payload = fixed_length + data_length;
  std::uint8_t* p = out.extend(kFrameHeaderBytes + payload + kFrameTrailerBytes);
  p[0] = static_cast<std::uint8_t>(kind);
  p[1] = device;
  store_le<std::uint16_t>(p + 2, flags);
  store_le<std::uint32_t>(p + 4, static_cast<std::uint32_t>(payload));
  store_le<std::uint64_t>(p + 8, next_sequence_++);
  if (fixed_length > 0) std::memcpy(p + kFrameHeaderBytes, fixed, fixed_length);
  return p;
}

void FrameEncoder::seal(std::uint8_t* frame, std::size_t fixed_length, const void* data, std::size_t data_length) {
  if (data_length > 0) std::memcpy(frame + kFrameHeaderBytes + fixed_length, data, data_length);
  const std::size_t covered = kFrameHeaderBytes + fixed_length + data_length;
  store_le<std::uint32_t>(frame + covered, ~crc32c(~0u, frame, covered));
}

void FrameEncoder::frame(Buffer& out, FrameKind kind, std::uint8_t device, std::uint16_t flags, const void* fixed,
                         std::size_t fixed_length, const void* data, std::size_t data_length) {
  seal(open(out, kind, device, flags, fixed, fixed_length, data_length), fixed_length, data, data_length);
}

void FrameEncoder::check_device(std::uint8_t device) const {
  if (device >= exports_)
    throw std::invalid_argument("recording: export " + std::to_string(device) + " is not in the header (" +
                                std::to_string(exports_) + " exports)");
}

void FrameEncoder::header(Buffer& out, const std::vector<ExportInfo>& exports) {
  if (next_sequence_ != 0) throw std::invalid_argument("recording: the header must be the first frame");
  if (exports.empty() || exports.size() > kMaxExports)
    throw std::invalid_argument("recording: 1 to " + std::to_string(kMaxExports) + " exports, not " +
                                std::to_string(exports.size()));
  std::vector<std::uint8_t> fixed(kMagic.size() + 8);
  std::memcpy(fixed.data(), kMagic.data(), kMagic.size());
  store_le<std::uint32_t>(fixed.data() + 8, kVersion);
  store_le<std::uint32_t>(fixed.data() + 12, static_cast<std::uint32_t>(exports.size()));
  for (const ExportInfo& e : exports) {
    if (e.name.empty() || e.name.size() > 255) throw std::invalid_argument("recording: an export's name has 1 to 255 bytes");
    if (e.atomic_unit == 0 || e.atomic_unit % 512 != 0)
      throw std::invalid_argument("recording: " + e.name + "'s atomic unit is " + std::to_string(e.atomic_unit) +
                                  " bytes, not whole 512-byte sectors");
    const std::size_t at = fixed.size();
    fixed.resize(at + 16 + e.name.size());
    store_le<std::uint64_t>(fixed.data() + at, e.size);
    store_le<std::uint32_t>(fixed.data() + at + 8, static_cast<std::uint32_t>(e.name.size()));
    std::memcpy(fixed.data() + at + 12, e.name.data(), e.name.size());
    store_le<std::uint32_t>(fixed.data() + at + 12 + e.name.size(), e.atomic_unit);
  }
  frame(out, FrameKind::header, kNoExport, 0, fixed.data(), fixed.size(), nullptr, 0);
  exports_ = exports.size();
}

void FrameEncoder::base(Buffer& out, std::uint8_t device, std::uint64_t offset, const void* data,
                        std::uint64_t length) {
  check_device(device);
  const auto* bytes = static_cast<const std::uint8_t*>(data);
  for (std::uint64_t done = 0; done < length;) {
    const std::uint64_t n = std::min<std::uint64_t>(length - done, kBaseChunk);
    std::uint8_t fixed[8];
    store_le<std::uint64_t>(fixed, offset + done);
    frame(out, FrameKind::base, device, 0, fixed, sizeof fixed, bytes + done, n);
    done += n;
  }
}

void FrameEncoder::base_old_data(Buffer& out, std::uint8_t device, std::uint64_t offset, std::uint64_t length) {
  check_device(device);
  if (offset % kOldDataSector != 0 || length % kOldDataSector != 0)
    throw std::invalid_argument("recording: old data of " + std::to_string(length) + " bytes at " +
                                std::to_string(offset) + ", not whole sectors");
  for (std::uint64_t done = 0; done < length;) {
    const std::uint64_t n = std::min<std::uint64_t>(length - done, kBaseChunk);
    std::uint8_t fixed[16];
    store_le<std::uint64_t>(fixed, offset + done);
    store_le<std::uint64_t>(fixed + 8, n);
    frame(out, FrameKind::base, device, kOldData, fixed, sizeof fixed, nullptr, 0);
    done += n;
  }
}

FrameEncoder::OpenWrite FrameEncoder::begin_write(Buffer& out, std::uint8_t device, std::uint64_t id,
                                                  std::uint64_t offset, std::uint32_t length, bool fua) {
  check_device(device);
  if (length > kMaxWrite)
    throw std::invalid_argument("recording: a write of " + std::to_string(length) + " bytes (at most " +
                                std::to_string(kMaxWrite) + ")");
  std::uint8_t fixed[kWriteFixedBytes];
  store_le<std::uint64_t>(fixed, id);
  store_le<std::uint64_t>(fixed + 8, offset);
  return {open(out, FrameKind::write, device, fua ? kFua : 0, fixed, sizeof fixed, length), length};
}

void FrameEncoder::finish_write(const OpenWrite& open, const void* data) {
  seal(open.frame, kWriteFixedBytes, data, open.length);
}

void FrameEncoder::write(Buffer& out, std::uint8_t device, std::uint64_t id, std::uint64_t offset, const void* data,
                         std::uint32_t length, bool fua) {
  finish_write(begin_write(out, device, id, offset, length, fua), data);
}

void FrameEncoder::change(Buffer& out, FrameKind kind, std::uint8_t device, std::uint64_t id, std::uint64_t offset,
                          std::uint32_t length, bool fua) {
  check_device(device);
  std::uint8_t fixed[20];
  store_le<std::uint64_t>(fixed, id);
  store_le<std::uint64_t>(fixed + 8, offset);
  store_le<std::uint32_t>(fixed + 16, length);
  frame(out, kind, device, fua ? kFua : 0, fixed, sizeof fixed, nullptr, 0);
}

void FrameEncoder::zero(Buffer& out, std::uint8_t device, std::uint64_t id, std::uint64_t offset,
                        std::uint32_t length, bool fua) {
  change(out, FrameKind::zero, device, id, offset, length, fua);
}

void FrameEncoder::trim(Buffer& out, std::uint8_t device, std::uint64_t id, std::uint64_t offset,
                        std::uint32_t length, bool fua) {
  change(out, FrameKind::trim, device, id, offset, length, fua);
}

void FrameEncoder::id_only(Buffer& out, FrameKind kind, std::uint8_t device, std::uint16_t flags, std::uint64_t id) {
  check_device(device);
  std::uint8_t fixed[8];
  store_le<std::uint64_t>(fixed, id);
  frame(out, kind, device, flags, fixed, sizeof fixed, nullptr, 0);
}

void FrameEncoder::ack(Buffer& out, std::uint8_t device, std::uint64_t id, bool durable) {
  id_only(out, FrameKind::ack, device, durable ? kDurable : 0, id);
}

void FrameEncoder::failed(Buffer& out, std::uint8_t device, std::uint64_t id) {
  id_only(out, FrameKind::failed, device, 0, id);
}

void FrameEncoder::flush(Buffer& out, std::uint8_t device, std::uint64_t id) {
  id_only(out, FrameKind::flush, device, 0, id);
}

void FrameEncoder::flush_done(Buffer& out, std::uint8_t device, std::uint64_t id) {
  id_only(out, FrameKind::flush_done, device, 0, id);
}

void FrameEncoder::mark(Buffer& out, std::uint64_t time_ns, std::string_view label) {
  if (exports_ == 0) throw std::invalid_argument("recording: a mark before the header");
  if (label.size() > kMaxLabel)
    throw std::invalid_argument("recording: a mark's label has at most " + std::to_string(kMaxLabel) + " bytes");
  std::uint8_t fixed[8];
  store_le<std::uint64_t>(fixed, time_ns);
  frame(out, FrameKind::mark, kNoExport, 0, fixed, sizeof fixed, label.data(), label.size());
}

void FrameEncoder::pad(Buffer& out, std::uint64_t at, std::size_t block) {
  if (exports_ == 0) throw std::invalid_argument("recording: a pad before the header");
  if (block == 0 || (block & (block - 1)) != 0) throw std::invalid_argument("recording: pad to a power of two");
  const std::size_t empty = kFrameHeaderBytes + kFrameTrailerBytes;
  const std::size_t payload = (block - (at + empty) % block) % block;
  std::uint8_t* p = open(out, FrameKind::pad, kNoExport, 0, nullptr, 0, payload);
  std::memset(p + kFrameHeaderBytes, 0, payload);
  seal(p, payload, nullptr, 0);  // the zeroes are its fixed part
}

void FrameEncoder::end(Buffer& out, std::string_view stopped_because) {
  if (exports_ == 0) throw std::invalid_argument("recording: the end before the header");
  std::uint8_t fixed[8];
  store_le<std::uint64_t>(fixed, next_sequence_);
  frame(out, FrameKind::end, kNoExport, stopped_because.empty() ? 0 : kStopped, fixed, sizeof fixed,
        stopped_because.data(), stopped_because.size());
}

}  // namespace fscore::record
