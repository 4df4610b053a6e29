// SPDX-License-Identifier: BSD-3-Clause
// ext4's extended attributes of an inode, read back: those in the inode's
// body (after its extra fields: a magic word, then entries whose values lie
// after the first entry) and those in its attribute block (i_file_acl: a
// 32-byte header, then entries whose values lie in the same block). An
// entry: name length, name index (the prefix: 1 "user.", 2
// "system.posix_acl_access", 3 "system.posix_acl_default", 4 "trusted.",
// 6 "security.", 7 "system.", 8 "system.richacl"), value offset, value inode
// (ea_inode: not read), value size, hash, the name; each padded to 4 bytes;
// the list ends with a zero word. With metadata_csum the block's checksum is
// checked as the kernel checks it before it trusts the block. An image is
// untrusted: every offset is checked, a broken one is a std::runtime_error
// saying what is wrong. Pure.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "fscore/block_io.h"
#include "fscore/ext4/image_reader.h"

namespace fscore::ext4 {

inline constexpr std::uint32_t kXattrMagic = 0xEA020000;

// The attribute block an inode's raw bytes (read_inode_bytes) name
// (i_file_acl, its high 16 bits included); 0 for none.
std::uint64_t inode_xattr_block(std::span<const std::uint8_t> raw_inode);

// Every attribute of inode `ino`, by full name ("user.nvj"), with its value.
std::map<std::string, std::vector<std::uint8_t>> read_xattrs(const BlockSource& source, const ImageInfo& info,
                                                             std::uint32_t ino);

}  // namespace fscore::ext4
