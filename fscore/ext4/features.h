// SPDX-License-Identifier: BSD-3-Clause
// ext4 feature flags and other on-disk constants the builder and reader
// share. Values from the kernel's fs/ext4/ext4.h and
// Documentation/filesystems/ext4/super.rst.
#pragma once

#include <cstdint>

namespace fscore::ext4 {

inline constexpr std::uint16_t kSuperMagic = 0xEF53;
inline constexpr std::uint64_t kSuperOffset = 1024;  // bytes from the start of the device
inline constexpr std::uint32_t kSuperSize = 1024;

namespace compat {
inline constexpr std::uint32_t kHasJournal = 0x4;
inline constexpr std::uint32_t kExtAttr = 0x8;
inline constexpr std::uint32_t kResizeInode = 0x10;
inline constexpr std::uint32_t kDirIndex = 0x20;
}  // namespace compat

namespace incompat {
inline constexpr std::uint32_t kFiletype = 0x2;
inline constexpr std::uint32_t kRecover = 0x4;
inline constexpr std::uint32_t kJournalDev = 0x8;
inline constexpr std::uint32_t kMetaBg = 0x10;
inline constexpr std::uint32_t kExtents = 0x40;
inline constexpr std::uint32_t k64bit = 0x80;
inline constexpr std::uint32_t kFlexBg = 0x200;
inline constexpr std::uint32_t kLargeDir = 0x4000;  // htrees of three levels
}  // namespace incompat

namespace ro_compat {
inline constexpr std::uint32_t kSparseSuper = 0x1;
inline constexpr std::uint32_t kLargeFile = 0x2;
inline constexpr std::uint32_t kHugeFile = 0x8;
inline constexpr std::uint32_t kGdtCsum = 0x10;
inline constexpr std::uint32_t kDirNlink = 0x20;
inline constexpr std::uint32_t kExtraIsize = 0x40;
inline constexpr std::uint32_t kMetadataCsum = 0x400;
}  // namespace ro_compat

// The feature set every image here gets: mke2fs's ext4 defaults without
// resize_inode.
inline constexpr std::uint32_t kDefaultCompat = compat::kExtAttr | compat::kDirIndex;
inline constexpr std::uint32_t kDefaultIncompat = incompat::kFiletype | incompat::kExtents |
                                                  incompat::k64bit | incompat::kFlexBg;
inline constexpr std::uint32_t kDefaultRoCompat = ro_compat::kSparseSuper | ro_compat::kLargeFile |
                                                  ro_compat::kHugeFile | ro_compat::kDirNlink |
                                                  ro_compat::kExtraIsize | ro_compat::kMetadataCsum;

// Reserved inodes (ext4.h EXT4_*_INO).
inline constexpr std::uint32_t kRootIno = 2;
inline constexpr std::uint32_t kJournalIno = 8;
inline constexpr std::uint32_t kFirstIno = 11;  // lost+found gets it, like mke2fs

// Block group descriptor flags.
inline constexpr std::uint16_t kBgInodeUninit = 0x1;
inline constexpr std::uint16_t kBgBlockUninit = 0x2;
inline constexpr std::uint16_t kBgInodeZeroed = 0x4;

// Superblock flags (s_flags): names hash as unsigned chars in htrees.
inline constexpr std::uint32_t kFlagsUnsignedHash = 0x2;

// Inode flags.
inline constexpr std::uint32_t kExtentsFl = 0x80000;
inline constexpr std::uint32_t kIndexFl = 0x1000;  // an htree directory
inline constexpr std::uint32_t kInlineDataFl = 0x10000000;

// The most links an inode takes (ext4.h EXT4_LINK_MAX); with dir_nlink a
// directory past it counts 1.
inline constexpr std::uint32_t kLinkMax = 65000;

// Extra inode fields every inode here carries (i_extra_isize).
inline constexpr std::uint16_t kExtraIsize = 32;

}  // namespace fscore::ext4
