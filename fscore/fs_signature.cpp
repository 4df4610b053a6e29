// SPDX-License-Identifier: BSD-3-Clause
#include "fscore/fs_signature.h"

#include <array>
#include <cstdint>
#include <cstring>

#include "fscore/endian.h"
#include "fscore/ext4/features.h"

namespace fscore {

namespace {

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
  namespace ext4 = fscore::ext4;
  namespace field = fscore::ext4::sb;
  std::array<std::uint8_t, 2> magic{};
  if (holds(device, ext4::kSuperOffset + field::kMagic, magic) &&
      load_le<std::uint16_t>(magic.data()) == ext4::kSuperMagic) {
    s.kind = FsKind::ext4;
    // has_journal with no journal inode: the journal is on another device.
    std::array<std::uint8_t, 4> compat{}, inum{};
    if (holds(device, ext4::kSuperOffset + field::kFeatureCompat, compat) &&
        holds(device, ext4::kSuperOffset + field::kJournalInum, inum))
      s.external_log = (load_le<std::uint32_t>(compat.data()) & ext4::compat::kHasJournal) != 0 &&
                       load_le<std::uint32_t>(inum.data()) == 0;
    // The size: the block count (its high word with 64bit), the block size.
    std::array<std::uint8_t, field::kBlocksCountHi + 4> sb{};
    if (holds(device, ext4::kSuperOffset, sb)) {
      std::uint64_t blocks = load_le<std::uint32_t>(sb.data() + field::kBlocksCountLo);
      if (load_le<std::uint32_t>(sb.data() + field::kFeatureIncompat) & ext4::incompat::k64bit)
        blocks |= std::uint64_t{load_le<std::uint32_t>(sb.data() + field::kBlocksCountHi)} << 32;
      const std::uint32_t log = load_le<std::uint32_t>(sb.data() + field::kLogBlockSize);
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
