// SPDX-License-Identifier: BSD-3-Clause
// The recording: everything the exports of one server received from a given
// moment, in the order the stores applied it, so that any crash state of the
// run can be rebuilt from the recording alone (the plugin's manual,
// docs/nbdkit-nvjournal-plugin.pod, RECORDINGS, says the same for users).
//
// A recording is a sequence of frames, all little-endian:
//
//   offset  size  field
//        0     1  kind (FrameKind)
//        1     1  export: index into the header's exports, kNoExport for
//                 frames of no export (header, mark, pad, end)
//        2     2  flags (kFua, kDurable, kStopped, kOldData: which apply per kind)
//        4     4  payload length in bytes
//        8     8  sequence: the frame's number, 0 for the header, then 1, 2, ...
//       16     n  payload (per kind, below)
//     16+n     4  crc32c (the standard CRC-32C, as ext4's) of bytes [0, 16+n)
//
// The first frame is the header, the last the end frame; a recording without
// its end frame is truncated. Payloads:
//
//   header      magic (8) "NVJREC\r\n", version u32, export count u32, then per
//               export: size u64, name length u32, the name (UTF-8), and
//               (version 2) its atomic unit u32: the bytes its model lands
//               whole at a power cut, a multiple of 512 (version 1: 512)
//   base        offset u64, the bytes: what the export held there when the
//               recording started (only allocated ranges: the rest is zeroes);
//               (version 3) flags: kOldData, and the payload is offset u64,
//               length u64: the export held old data there (old_data.h),
//               whole sectors, at most kBaseChunk bytes
//   write       id u64, offset u64, the bytes; flags: kFua
//   zero, trim  id u64, offset u64, length u32; flags: kFua
//   ack         id u64: the write, zero or trim was acknowledged; flags:
//               kDurable when it was durable on acknowledgement (FUA, or a
//               region whose rule is on_acknowledge)
//   failed      id u64: the write, zero or trim failed; its bytes are
//               whatever landed
//   flush       id u64: a flush arrived; it covers the writes of its export
//               acknowledged in frames before this one
//   flush_done  id u64: that flush completed: what it covers is durable
//   mark        time u64 (ns since the server started), the label (UTF-8)
//   pad         zeroes: nothing happened; the recorder writes its file in
//               whole 4096-byte blocks and pads a batch to the next one
//   end         frames u64 (the frames before this one, header included);
//               flags: kStopped when the recording was stopped by an error,
//               the reason (UTF-8) after the count
//
// A change's frame comes before its bytes land in the store and in the order
// they land; an ack after the change's frame; ids are per recording, unique
// across exports.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace fscore::record {

inline constexpr std::string_view kMagic{"NVJREC\r\n", 8};
inline constexpr std::uint32_t kVersion = 3;  // what is written; 1 and 2 are read too

inline constexpr std::size_t kFrameHeaderBytes = 16;
inline constexpr std::size_t kFrameTrailerBytes = 4;
// A write carries at most kMaxWrite bytes (NBD's largest request is 32 MiB);
// a base frame at most kBaseChunk. No payload is longer than kMaxPayload.
inline constexpr std::uint32_t kMaxWrite = 64u << 20;
inline constexpr std::uint32_t kBaseChunk = 1u << 20;
inline constexpr std::uint32_t kMaxPayload = kMaxWrite + 16;
inline constexpr std::uint8_t kNoExport = 0xFF;
inline constexpr std::size_t kMaxLabel = 4096;  // a mark's label, in bytes
inline constexpr std::size_t kMaxExports = 8;

enum class FrameKind : std::uint8_t {
  header = 1,
  base = 2,
  write = 3,
  zero = 4,
  trim = 5,
  ack = 6,
  failed = 7,
  flush = 8,
  flush_done = 9,
  mark = 10,
  end = 11,
  pad = 12,
};

// Flags, per kind.
inline constexpr std::uint16_t kFua = 1;      // write, zero, trim
inline constexpr std::uint16_t kDurable = 1;  // ack
inline constexpr std::uint16_t kStopped = 1;  // end
inline constexpr std::uint16_t kOldData = 1;  // base (version 3)

// "write", "flush_done", ...; "unknown" for a value no kind has.
const char* to_string(FrameKind kind);

struct ExportInfo {
  std::string name;
  std::uint64_t size = 0;
  std::uint32_t atomic_unit = 512;  // bytes, a multiple of 512
};

}  // namespace fscore::record
