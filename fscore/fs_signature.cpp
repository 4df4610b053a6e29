// SPDX-License-Identifier: BSD-3-Clause
#include "fscore/fs_signature.h"

#include <array>
#include <cstdint>
#include <cstring>

#include "fscore/endian.h"

namespace fscore {

namespace {

constexpr std::uint64_t kExt4Magic = 1024 + 56;
constexpr std::uint64_t kXfsLogStart = 48;
constexpr std::uint64_t kBtrfsMagic = 65536 + 0x40;

bool holds(const BlockSource& device, std::uint64_t offset, std::span<std::uint8_t> out) {
  if (device.size() < offset + out.size()) return false;
  device.read(offset, out);
  return true;
}

}  // namespace

const char* to_string(FsKind kind) {
  switch (kind) {
    case FsKind::ext4: return "ext4";
    case FsKind::xfs: return "xfs";
    case FsKind::btrfs: return "btrfs";
    case FsKind::unknown: break;
  }
  return "unknown";
}

FsSignature identify_filesystem(const BlockSource& device) {
  FsSignature s;
  std::array<std::uint8_t, 56> xfs{};
  if (holds(device, 0, xfs) && std::memcmp(xfs.data(), "XFSB", 4) == 0) {
    s.kind = FsKind::xfs;
    s.external_log = load_be<std::uint64_t>(xfs.data() + kXfsLogStart) == 0;
    s.bytes = load_be<std::uint64_t>(xfs.data() + 8) * load_be<std::uint32_t>(xfs.data() + 4);
    return s;
  }
  std::array<std::uint8_t, 2> ext4{};
  if (holds(device, kExt4Magic, ext4) && load_le<std::uint16_t>(ext4.data()) == 0xEF53) {
    s.kind = FsKind::ext4;
    // has_journal (s_feature_compat at 0x5C) with no journal inode
    // (s_journal_inum at 0xE0): the journal is on another device.
    std::array<std::uint8_t, 4> compat{}, inum{};
    if (holds(device, 1024 + 0x5C, compat) && holds(device, 1024 + 0xE0, inum))
      s.external_log = (load_le<std::uint32_t>(compat.data()) & 0x4) != 0 && load_le<std::uint32_t>(inum.data()) == 0;
    // s_blocks_count_lo (0x04), s_log_block_size (0x18), s_feature_incompat
    // (0x60: 64bit 0x80), s_blocks_count_hi (0x150).
    std::array<std::uint8_t, 0x154> sb{};
    if (holds(device, 1024, sb)) {
      std::uint64_t blocks = load_le<std::uint32_t>(sb.data() + 0x04);
      if (load_le<std::uint32_t>(sb.data() + 0x60) & 0x80)
        blocks |= std::uint64_t{load_le<std::uint32_t>(sb.data() + 0x150)} << 32;
      const std::uint32_t log = load_le<std::uint32_t>(sb.data() + 0x18);
      if (log <= 6) s.bytes = blocks * (std::uint64_t{1024} << log);
    }
    return s;
  }
  std::array<std::uint8_t, 8> btrfs{};
  if (holds(device, kBtrfsMagic, btrfs) && std::memcmp(btrfs.data(), "_BHRfS_M", 8) == 0) {
    s.kind = FsKind::btrfs;
    std::array<std::uint8_t, 8> total{};
    if (holds(device, 65536 + 0x70, total)) s.bytes = load_le<std::uint64_t>(total.data());
  }
  return s;
}

}  // namespace fscore
