// SPDX-License-Identifier: BSD-3-Clause
// ext4's on-disk constants, in one place as e2fsprogs keeps ext2_fs.h:
// feature flags, states, reserved inodes, flags and the byte offsets of the
// superblock's fields. Values from the kernel's fs/ext4/ext4.h and
// Documentation/filesystems/ext4/super.rst.
#pragma once

#include <cstddef>
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
inline constexpr std::uint32_t kFastCommit = 0x400;
inline constexpr std::uint32_t kOrphanFile = 0x1000;
}  // namespace compat

namespace incompat {
inline constexpr std::uint32_t kCompression = 0x1;
inline constexpr std::uint32_t kFiletype = 0x2;
inline constexpr std::uint32_t kRecover = 0x4;
inline constexpr std::uint32_t kJournalDev = 0x8;
inline constexpr std::uint32_t kMetaBg = 0x10;
inline constexpr std::uint32_t kExtents = 0x40;
inline constexpr std::uint32_t k64bit = 0x80;
inline constexpr std::uint32_t kFlexBg = 0x200;
inline constexpr std::uint32_t kEaInode = 0x400;
inline constexpr std::uint32_t kDirdata = 0x1000;
inline constexpr std::uint32_t kCsumSeed = 0x2000;
inline constexpr std::uint32_t kLargeDir = 0x4000;  // htrees of three levels
inline constexpr std::uint32_t kInlineData = 0x8000;
inline constexpr std::uint32_t kEncrypt = 0x10000;
inline constexpr std::uint32_t kCasefold = 0x20000;
}  // namespace incompat

namespace ro_compat {
inline constexpr std::uint32_t kSparseSuper = 0x1;
inline constexpr std::uint32_t kLargeFile = 0x2;
inline constexpr std::uint32_t kHugeFile = 0x8;
inline constexpr std::uint32_t kGdtCsum = 0x10;
inline constexpr std::uint32_t kDirNlink = 0x20;
inline constexpr std::uint32_t kExtraIsize = 0x40;
inline constexpr std::uint32_t kBigalloc = 0x200;
inline constexpr std::uint32_t kMetadataCsum = 0x400;
inline constexpr std::uint32_t kReplica = 0x800;
inline constexpr std::uint32_t kSharedBlocks = 0x4000;
inline constexpr std::uint32_t kOrphanPresent = 0x10000;
}  // namespace ro_compat

// The filesystem's state (s_state).
namespace state {
inline constexpr std::uint16_t kValidFs = 0x1;  // cleanly unmounted
inline constexpr std::uint16_t kErrorFs = 0x2;  // errors detected
}  // namespace state

// Byte offsets in struct ext4_super_block.
namespace sb {
inline constexpr std::size_t kInodesCount = 0x00, kBlocksCountLo = 0x04, kRBlocksCountLo = 0x08, kFreeBlocksLo = 0x0C,
                             kFreeInodes = 0x10, kFirstDataBlock = 0x14, kLogBlockSize = 0x18, kLogClusterSize = 0x1C,
                             kBlocksPerGroup = 0x20, kClustersPerGroup = 0x24, kInodesPerGroup = 0x28, kMtime = 0x2C,
                             kWtime = 0x30, kMaxMntCount = 0x36, kMagic = 0x38, kState = 0x3A, kErrors = 0x3C,
                             kLastCheck = 0x40, kRevLevel = 0x4C, kFirstIno = 0x54, kInodeSize = 0x58,
                             kBlockGroupNr = 0x5A, kFeatureCompat = 0x5C, kFeatureIncompat = 0x60,
                             kFeatureRoCompat = 0x64, kUuid = 0x68, kVolumeName = 0x78, kJournalUuid = 0xD0,
                             kJournalInum = 0xE0, kJournalDev = 0xE4, kLastOrphan = 0xE8, kHashSeed = 0xEC,
                             kDefHashVersion = 0xFC, kJnlBackupType = 0xFD, kDescSize = 0xFE,
                             kDefaultMountOpts = 0x100, kMkfsTime = 0x108, kJnlBlocks = 0x10C,
                             kBlocksCountHi = 0x150, kRBlocksCountHi = 0x154, kFreeBlocksHi = 0x158,
                             kMinExtraIsize = 0x15C, kWantExtraIsize = 0x15E, kFlags = 0x160,
                             kLogGroupsPerFlex = 0x174, kChecksumType = 0x175, kKbytesWritten = 0x178,
                             kChecksumSeed = 0x270, kChecksum = 0x3FC;
}  // namespace sb

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
