// SPDX-License-Identifier: BSD-3-Clause
#include "fscore/ext4/inode.h"

#include <cstring>

#include "fscore/crc32c.h"
#include "fscore/endian.h"

namespace fscore::ext4 {
namespace {

// Offsets in struct ext4_inode.
constexpr std::size_t kMode = 0x00, kUid = 0x02, kSizeLo = 0x04, kAtime = 0x08, kCtime = 0x0C,
                      kMtime = 0x10, kDtime = 0x14, kGid = 0x18, kLinks = 0x1A, kBlocksLo = 0x1C,
                      kFlags = 0x20, kBlock = 0x28, kGeneration = 0x64, kSizeHigh = 0x6C,
                      kBlocksHigh = 0x74, kUidHigh = 0x78, kGidHigh = 0x7A, kChecksumLo = 0x7C,
                      kExtraIsizeAt = 0x80, kChecksumHi = 0x82, kCtimeExtra = 0x84, kMtimeExtra = 0x88,
                      kAtimeExtra = 0x8C, kCrtime = 0x90, kCrtimeExtra = 0x94;
constexpr std::size_t kGoodOldSize = 128;

// Seconds beyond 32 bits go into two epoch bits of the extra field, the
// nanoseconds into the 30 above them (ext4.h ext4_encode_extra_time).
std::uint32_t extra_time(const Timestamp& t) {
  const std::int64_t epoch = (t.sec - static_cast<std::int32_t>(t.sec)) >> 32;
  return (static_cast<std::uint32_t>(epoch) & 3u) | (t.nsec << 2);
}

Timestamp decode_time(std::int32_t lo, std::uint32_t extra) {
  Timestamp t;
  t.sec = static_cast<std::int64_t>(lo) + (static_cast<std::int64_t>(extra & 3u) << 32);
  t.nsec = extra >> 2;
  return t;
}

void put_time(std::uint8_t* p, std::size_t at, std::size_t extra_at, const Timestamp& t) {
  store_le<std::uint32_t>(p + at, static_cast<std::uint32_t>(t.sec));
  store_le<std::uint32_t>(p + extra_at, extra_time(t));
}

Timestamp get_time(const std::uint8_t* p, std::size_t at, std::size_t extra_at, bool has_extra) {
  return decode_time(static_cast<std::int32_t>(load_le<std::uint32_t>(p + at)),
                     has_extra ? load_le<std::uint32_t>(p + extra_at) : 0);
}

std::uint32_t inode_checksum(std::span<const std::uint8_t> in, std::uint32_t ino, std::uint32_t seed) {
  std::uint8_t word[4];
  store_le<std::uint32_t>(word, ino);
  std::uint32_t crc = crc32c(seed, word, 4);
  std::memcpy(word, in.data() + kGeneration, 4);
  crc = crc32c(crc, word, 4);
  const std::uint8_t zero[2] = {0, 0};
  crc = crc32c(crc, in.data(), kChecksumLo);
  crc = crc32c(crc, zero, 2);
  crc = crc32c(crc, in.data() + kChecksumLo + 2, kGoodOldSize - kChecksumLo - 2);
  if (in.size() > kGoodOldSize) {
    const std::uint16_t extra = load_le<std::uint16_t>(in.data() + kExtraIsizeAt);
    crc = crc32c(crc, in.data() + kGoodOldSize, kChecksumHi - kGoodOldSize);
    if (extra >= kChecksumHi + 2 - kGoodOldSize) {
      crc = crc32c(crc, zero, 2);
      crc = crc32c(crc, in.data() + kChecksumHi + 2, in.size() - kChecksumHi - 2);
    } else {
      crc = crc32c(crc, in.data() + kChecksumHi, in.size() - kChecksumHi);
    }
  }
  return crc;
}

}  // namespace

void encode_inode(const Inode& n, std::uint32_t ino, std::uint32_t seed, std::span<std::uint8_t> out) {
  std::uint8_t* p = out.data();
  std::memset(p, 0, out.size());
  store_le<std::uint16_t>(p + kMode, n.mode);
  store_le<std::uint16_t>(p + kUid, static_cast<std::uint16_t>(n.uid));
  store_le<std::uint16_t>(p + kUidHigh, static_cast<std::uint16_t>(n.uid >> 16));
  store_le<std::uint16_t>(p + kGid, static_cast<std::uint16_t>(n.gid));
  store_le<std::uint16_t>(p + kGidHigh, static_cast<std::uint16_t>(n.gid >> 16));
  store_le<std::uint32_t>(p + kSizeLo, static_cast<std::uint32_t>(n.size));
  store_le<std::uint32_t>(p + kSizeHigh, static_cast<std::uint32_t>(n.size >> 32));
  store_le<std::uint32_t>(p + kDtime, n.dtime);
  store_le<std::uint16_t>(p + kLinks, n.links);
  store_le<std::uint32_t>(p + kBlocksLo, static_cast<std::uint32_t>(n.blocks_512));
  store_le<std::uint16_t>(p + kBlocksHigh, static_cast<std::uint16_t>(n.blocks_512 >> 32));
  store_le<std::uint32_t>(p + kFlags, n.flags);
  std::memcpy(p + kBlock, n.block.data(), n.block.size());
  store_le<std::uint32_t>(p + kGeneration, n.generation);
  const bool extra = out.size() > kGoodOldSize;
  if (extra) {
    store_le<std::uint16_t>(p + kExtraIsizeAt, n.extra_isize);
    put_time(p, kCtime, kCtimeExtra, n.ctime);
    put_time(p, kMtime, kMtimeExtra, n.mtime);
    put_time(p, kAtime, kAtimeExtra, n.atime);
    put_time(p, kCrtime, kCrtimeExtra, n.crtime);
  } else {
    store_le<std::uint32_t>(p + kCtime, static_cast<std::uint32_t>(n.ctime.sec));
    store_le<std::uint32_t>(p + kMtime, static_cast<std::uint32_t>(n.mtime.sec));
    store_le<std::uint32_t>(p + kAtime, static_cast<std::uint32_t>(n.atime.sec));
  }
  const std::uint32_t crc = inode_checksum(out, ino, seed);
  store_le<std::uint16_t>(p + kChecksumLo, static_cast<std::uint16_t>(crc));
  if (extra && n.extra_isize >= kChecksumHi + 2 - kGoodOldSize)
    store_le<std::uint16_t>(p + kChecksumHi, static_cast<std::uint16_t>(crc >> 16));
}

Inode decode_inode(std::span<const std::uint8_t> in) {
  const std::uint8_t* p = in.data();
  Inode n;
  n.mode = load_le<std::uint16_t>(p + kMode);
  n.uid = load_le<std::uint16_t>(p + kUid) | std::uint32_t{load_le<std::uint16_t>(p + kUidHigh)} << 16;
  n.gid = load_le<std::uint16_t>(p + kGid) | std::uint32_t{load_le<std::uint16_t>(p + kGidHigh)} << 16;
  n.size = load_le<std::uint32_t>(p + kSizeLo) | std::uint64_t{load_le<std::uint32_t>(p + kSizeHigh)} << 32;
  n.dtime = load_le<std::uint32_t>(p + kDtime);
  n.links = load_le<std::uint16_t>(p + kLinks);
  n.blocks_512 = load_le<std::uint32_t>(p + kBlocksLo) | std::uint64_t{load_le<std::uint16_t>(p + kBlocksHigh)} << 32;
  n.flags = load_le<std::uint32_t>(p + kFlags);
  std::memcpy(n.block.data(), p + kBlock, n.block.size());
  n.generation = load_le<std::uint32_t>(p + kGeneration);
  const bool extra = in.size() > kGoodOldSize;
  n.extra_isize = extra ? load_le<std::uint16_t>(p + kExtraIsizeAt) : 0;
  const bool times = extra && n.extra_isize >= kCrtimeExtra + 4 - kGoodOldSize;
  n.ctime = get_time(p, kCtime, kCtimeExtra, times);
  n.mtime = get_time(p, kMtime, kMtimeExtra, times);
  n.atime = get_time(p, kAtime, kAtimeExtra, times);
  if (times) n.crtime = get_time(p, kCrtime, kCrtimeExtra, true);
  return n;
}

bool inode_checksum_ok(std::span<const std::uint8_t> in, std::uint32_t ino, std::uint32_t seed) {
  const std::uint32_t crc = inode_checksum(in, ino, seed);
  if (load_le<std::uint16_t>(in.data() + kChecksumLo) != static_cast<std::uint16_t>(crc)) return false;
  if (in.size() > kGoodOldSize && load_le<std::uint16_t>(in.data() + kExtraIsizeAt) >= kChecksumHi + 2 - kGoodOldSize)
    return load_le<std::uint16_t>(in.data() + kChecksumHi) == static_cast<std::uint16_t>(crc >> 16);
  return true;
}

void encode_device_number(std::uint32_t major, std::uint32_t minor, std::array<std::uint8_t, 60>& block) {
  block.fill(0);
  if (major < 256 && minor < 256) {
    store_le<std::uint32_t>(block.data(), (major << 8) | minor);
  } else {
    store_le<std::uint32_t>(block.data() + 4, (minor & 0xFFu) | (major << 8) | ((minor & ~0xFFu) << 12));
  }
}

std::uint32_t inode_csum_seed(std::uint32_t fs_seed, std::uint32_t ino, std::uint32_t generation) {
  std::uint8_t word[4];
  store_le<std::uint32_t>(word, ino);
  const std::uint32_t crc = crc32c(fs_seed, word, 4);
  store_le<std::uint32_t>(word, generation);
  return crc32c(crc, word, 4);
}

}  // namespace fscore::ext4
