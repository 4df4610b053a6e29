// SPDX-License-Identifier: BSD-3-Clause
#include "fscore/ext4/xattr.h"

#include <stdexcept>

#include "fscore/crc32c.h"
#include "fscore/endian.h"

namespace fscore::ext4 {

namespace {

// Offsets in the inode (struct ext4_inode) and the attribute block's header.
constexpr std::size_t kInodeFileAclLo = 0x68, kInodeFileAclHigh = 0x76, kInodeExtraIsize = 0x80, kInodeGoodOldSize = 128;
constexpr std::size_t kXattrBlockHeader = 32, kXattrBlockChecksum = 0x10;
constexpr std::size_t kXattrEntryHead = 16;  // name_len, name_index, value_offs, value_inum, value_size, hash

[[noreturn]] void bad_xattr(std::uint32_t ino, const std::string& what) {
  throw std::runtime_error("inode " + std::to_string(ino) + "'s extended attributes: " + what);
}

std::string prefix_of(std::uint8_t index, std::uint32_t ino) {
  switch (index) {
    case 0: return "";
    case 1: return "user.";
    case 2: return "system.posix_acl_access";
    case 3: return "system.posix_acl_default";
    case 4: return "trusted.";
    case 6: return "security.";
    case 7: return "system.";
    case 8: return "system.richacl";
  }
  bad_xattr(ino, "an unknown name index " + std::to_string(index));
}

// The entries from `entries` (in `area`), values at `values` + value_offs.
void read_entries(std::span<const std::uint8_t> area, std::size_t entries, std::size_t values, std::uint32_t ino,
                  std::map<std::string, std::vector<std::uint8_t>>& out) {
  std::size_t at = entries;
  for (;;) {
    if (at + 4 > area.size()) bad_xattr(ino, "the entries run past their area");
    if (load_le<std::uint32_t>(area.data() + at) == 0) return;  // the end
    if (at + kXattrEntryHead > area.size()) bad_xattr(ino, "an entry runs past its area");
    const std::uint8_t name_len = area[at];
    const std::uint8_t index = area[at + 1];
    const std::uint16_t value_offs = load_le<std::uint16_t>(area.data() + at + 2);
    const std::uint32_t value_inum = load_le<std::uint32_t>(area.data() + at + 4);
    const std::uint32_t value_size = load_le<std::uint32_t>(area.data() + at + 8);
    if (name_len == 0) bad_xattr(ino, "an entry with an empty name");
    if (at + kXattrEntryHead + name_len > area.size()) bad_xattr(ino, "a name runs past its area");
    const std::string name = prefix_of(index, ino) + std::string(reinterpret_cast<const char*>(area.data() + at + kXattrEntryHead), name_len);
    if (value_inum != 0) bad_xattr(ino, name + "'s value is in an inode of its own (ea_inode: not read)");
    if (values + value_offs + std::uint64_t{value_size} > area.size()) bad_xattr(ino, name + "'s value runs past its area");
    const auto* v = area.data() + values + value_offs;
    out[name].assign(v, v + value_size);
    at += (kXattrEntryHead + name_len + 3) & ~std::size_t{3};
  }
}

}  // namespace

std::uint64_t inode_xattr_block(std::span<const std::uint8_t> raw) {
  if (raw.size() < kInodeFileAclHigh + 2) return 0;
  return load_le<std::uint32_t>(raw.data() + kInodeFileAclLo) |
         std::uint64_t{load_le<std::uint16_t>(raw.data() + kInodeFileAclHigh)} << 32;
}

std::map<std::string, std::vector<std::uint8_t>> read_xattrs(const BlockSource& source, const ImageInfo& info,
                                                             std::uint32_t ino) {
  std::map<std::string, std::vector<std::uint8_t>> out;
  const std::vector<std::uint8_t> raw = read_inode_bytes(source, info, ino);
  if (raw.size() > kInodeGoodOldSize) {
    const std::size_t body = kInodeGoodOldSize + load_le<std::uint16_t>(raw.data() + kInodeExtraIsize);
    if (body + 4 <= raw.size() && load_le<std::uint32_t>(raw.data() + body) == kXattrMagic) {
      const std::span<const std::uint8_t> area(raw.data() + body + 4, raw.size() - body - 4);
      read_entries(area, 0, 0, ino, out);
    }
  }
  const std::uint64_t block = inode_xattr_block(raw);
  if (block == 0) return out;
  if (block >= info.blocks) bad_xattr(ino, "its block " + std::to_string(block) + " lies outside the filesystem");
  std::vector<std::uint8_t> bytes(info.block_size);
  source.read(block * info.block_size, bytes);
  if (load_le<std::uint32_t>(bytes.data()) != kXattrMagic) bad_xattr(ino, "its block has no attribute magic");
  if (info.super.has_metadata_csum()) {
    // crc32c(seed, the block's number as 64 bits little-endian, the block
    // with its checksum field zeroed), as the kernel's ext4_xattr_block_csum.
    std::uint8_t number[8];
    store_le<std::uint64_t>(number, block);
    const std::uint32_t want = load_le<std::uint32_t>(bytes.data() + kXattrBlockChecksum);
    store_le<std::uint32_t>(bytes.data() + kXattrBlockChecksum, 0);
    std::uint32_t crc = crc32c(info.super.csum_seed(), number, sizeof number);
    crc = crc32c(crc, bytes.data(), bytes.size());
    if (crc != want) bad_xattr(ino, "its block's checksum does not match");
  }
  read_entries(bytes, kXattrBlockHeader, 0, ino, out);
  return out;
}

}  // namespace fscore::ext4
