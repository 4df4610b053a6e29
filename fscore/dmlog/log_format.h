// SPDX-License-Identifier: BSD-3-Clause
// dm-log-writes' log: what the kernel's dm-log-writes target (and QEMU's
// blklogwrites driver) write to the log device, so that fstests' replay-log
// can rebuild the data device as it was after any entry. All little-endian;
// a "sector" is the log's sector size (the super block's), not 512 bytes.
//
//   log sector 0   the super block, zero-padded to a whole sector:
//                    0  magic u64 (kMagic)
//                    8  version u64 (1)
//                   16  nr_entries u64: the entries the log holds, as last
//                       rewritten (the kernel rewrites it after FUA and mark
//                       entries, QEMU after flushes: a log cut short may
//                       hold more entries than it counts)
//                   24  sectorsize u32 (bytes 28..31 are padding)
//   then, from log sector 1, entry after entry:
//     one sector   the entry's header, zero-padded:
//                    0  sector u64: where on the data device, in log sectors
//                    8  nr_sectors u64: how many
//                   16  flags u64 (kFlush ...)
//                   24  data_len u64: a mark's label length, else 0
//                   32  a mark's label (at most sectorsize - 33 bytes)
//     nr_sectors sectors of the write's data (none for discards and marks)
//
// An entry with FLUSH stands for a flush that completed: the kernel logs,
// just before it, the writes that had completed when the flush was issued
// (held until then), so the device after the entries up to a FLUSH is the
// worst case a power cut right after that flush leaves. A FUA write is
// logged as it completes. A FLUSH entry with data is a write with a flush
// before it (REQ_PREFLUSH). Pure: constants and the two headers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

namespace fscore::dmlog {

inline constexpr std::uint64_t kMagic = 0x6a736677736872ULL;
inline constexpr std::uint64_t kVersion = 1;
inline constexpr std::size_t kHeaderBytes = 32;  // an entry's fields, before a mark's label

inline constexpr std::uint64_t kFlush = 1;
inline constexpr std::uint64_t kFua = 2;
inline constexpr std::uint64_t kDiscard = 4;
inline constexpr std::uint64_t kMark = 8;
inline constexpr std::uint64_t kMetadata = 0x10;
inline constexpr std::uint64_t kKnownFlags = kFlush | kFua | kDiscard | kMark | kMetadata;

// Log sector sizes the format is read and written with: a power of two from
// 512 bytes (the kernel takes the data device's logical block size; QEMU's
// log-sector-size may be up to 16 MiB, larger ones are refused here).
inline constexpr std::uint32_t kMinSectorSize = 512;
inline constexpr std::uint32_t kMaxSectorSize = 1u << 20;
inline constexpr bool valid_sector_size(std::uint64_t bytes) {
  return bytes >= kMinSectorSize && bytes <= kMaxSectorSize && (bytes & (bytes - 1)) == 0;
}

struct Super {
  std::uint64_t magic = kMagic;
  std::uint64_t version = kVersion;
  std::uint64_t nr_entries = 0;
  std::uint32_t sectorsize = 512;
};

struct EntryHeader {
  std::uint64_t sector = 0;
  std::uint64_t nr_sectors = 0;
  std::uint64_t flags = 0;
  std::uint64_t data_len = 0;
};

// Decode from / encode into the first bytes of a sector (at least 32).
Super decode_super(std::span<const std::uint8_t> bytes);
void encode_super(const Super& super, std::span<std::uint8_t> out);
EntryHeader decode_entry(std::span<const std::uint8_t> bytes);
void encode_entry(const EntryHeader& entry, std::span<std::uint8_t> out);

// "FLUSH|FUA", "none" for none; unknown bits as hex ("MARK|0x40").
std::string describe_flags(std::uint64_t flags);

}  // namespace fscore::dmlog
