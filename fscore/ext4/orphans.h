// SPDX-License-Identifier: BSD-3-Clause
// The orphan list, as a mount processes it (the kernel's
// ext4_orphan_cleanup, fs/ext4/orphan.c): s_last_orphan names the first
// inode, each inode's i_dtime the next, 0 ends it. A mount takes each inode
// as ext4_orphan_get does: a number from the first ordinary inode to the
// last, its bit set in its group's inode bitmap (the bitmap's checksum
// good), the inode itself good (its checksum), with links left a file the
// kernel can truncate (a regular file, a directory, a symbolic link), and
// the next number in range. It then deletes the inodes with no links and
// truncates the others to their size: neither changes what a lookup or a
// read within a file's size shows (a lookup refuses an inode with no links
// anyway: TreeReader). A list the kernel does not take makes it record an
// error in the superblock, which a forced e2fsck then finds: here a
// std::runtime_error naming the inode. Pure.
#pragma once

#include <cstdint>
#include <vector>

#include "fscore/block_io.h"
#include "fscore/ext4/image_reader.h"

namespace fscore::ext4 {

struct OrphanList {
  std::vector<std::uint32_t> deleted;    // no links left: the mount deletes them
  std::vector<std::uint32_t> truncated;  // links left: truncated to their size
};

OrphanList read_orphans(const BlockSource& source, const ImageInfo& info);

}  // namespace fscore::ext4
