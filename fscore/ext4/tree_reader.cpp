// SPDX-License-Identifier: BSD-3-Clause
#include "fscore/ext4/tree_reader.h"

#include <algorithm>
#include <stdexcept>

#include "fscore/endian.h"
#include "fscore/ext4/dir_block.h"
#include "fscore/ext4/extent_tree.h"
#include "fscore/ext4/features.h"
#include "fscore/ext4/indirect_blocks.h"

namespace fscore::ext4 {

namespace {

constexpr std::size_t kMaxExtents = std::size_t{1} << 20;
constexpr std::size_t kMaxDepth = 64;  // path components

[[noreturn]] void bad_tree(const std::string& what) { throw std::runtime_error(what); }

}  // namespace

TreeReader::TreeReader(const BlockSource& source) : source_(source), info_(read_image(source)) {
  if (info_.journal_device) bad_tree("a journal device, not a filesystem");
}

std::optional<std::uint32_t> TreeReader::seed_of(const Found& file) const {
  if (!info_.super.has_metadata_csum()) return std::nullopt;
  return inode_csum_seed(info_.super.csum_seed(), file.ino, file.inode.generation);
}

std::vector<Extent> TreeReader::mapping(const Found& file, std::uint64_t file_blocks) const {
  const Inode& inode = file.inode;
  if ((inode.flags & kInlineDataFl) != 0) bad_tree("inline data is not read here");
  if ((inode.flags & kExtentsFl) != 0) {
    try {
      return read_extent_tree(inode.block, source_, info_.block_size, info_.blocks, kMaxExtents, seed_of(file));
    } catch (const std::runtime_error& e) {
      bad_tree("inode " + std::to_string(file.ino) + ": " + e.what());
    }
  }
  return read_indirect_blocks(inode.block, source_, info_.block_size, info_.blocks, file_blocks, file_blocks + 1,
                              kMaxExtents);
}

std::vector<Extent> TreeReader::extents(const Found& file, std::uint64_t bytes) const {
  const std::uint32_t bs = info_.block_size;
  const std::uint64_t file_blocks = (std::min(bytes, file.inode.size) + bs - 1) / bs;
  std::vector<Extent> out;
  for (const Extent& x : mapping(file, file_blocks))
    if (!x.unwritten && x.logical < file_blocks) out.push_back(x);
  std::sort(out.begin(), out.end(), [](const Extent& a, const Extent& b) { return a.logical < b.logical; });
  return out;
}

std::vector<std::uint8_t> TreeReader::contents(const Found& file, std::uint64_t limit) const {
  const std::uint64_t size = file.inode.size;
  if (size > limit) bad_tree("a file of " + std::to_string(size) + " bytes, more than " + std::to_string(limit));
  const std::uint32_t bs = info_.block_size;
  const std::uint64_t file_blocks = (size + bs - 1) / bs;
  std::vector<std::uint8_t> out(static_cast<std::size_t>(size), 0);
  for (const Extent& x : mapping(file, file_blocks)) {
    if (x.unwritten || x.logical >= file_blocks) continue;
    const std::uint64_t blocks = std::min<std::uint64_t>(x.length, file_blocks - x.logical);
    const std::uint64_t at = std::uint64_t{x.logical} * bs;
    const std::uint64_t n = std::min<std::uint64_t>(blocks * bs, size - at);
    source_.read(x.physical * bs, std::span<std::uint8_t>(out.data() + at, static_cast<std::size_t>(n)));
  }
  return out;
}

std::vector<DirEntry> TreeReader::entries(const Found& directory) const {
  if ((directory.inode.mode & kModeTypeMask) != kModeDir) bad_tree("not a directory");
  const std::uint32_t bs = info_.block_size;
  if (directory.inode.size % bs != 0)
    bad_tree("a directory of " + std::to_string(directory.inode.size) + " bytes, not whole blocks");
  const std::vector<std::uint8_t> bytes = contents(directory, std::uint64_t{1} << 30);
  const std::optional<std::uint32_t> seed = seed_of(directory);
  const bool htree = (info_.super.feature_compat & compat::kDirIndex) != 0 && (directory.inode.flags & kIndexFl) != 0;
  std::vector<DirEntry> out;
  for (std::size_t block = 0; block < bytes.size(); block += bs) {
    const std::span<const std::uint8_t> whole(bytes.data() + block, bs);
    const std::string where = "directory inode " + std::to_string(directory.ino) + ", block " + std::to_string(block / bs);
    // The kernel's reading of a directory block: an htree's root (block 0)
    // and interior nodes (one entry over the whole block) are index blocks;
    // every other block is a leaf with its tail.
    const bool index = htree && (block == 0 || rec_len_from_disk(load_le<std::uint16_t>(whole.data() + 4), bs) == bs);
    if (seed && index) {
      switch (dx_block_checksum(whole, *seed)) {
        case DxBlockCheck::ok: break;
        case DxBlockCheck::not_index: bad_tree(where + ": an htree index block that is none");
        case DxBlockCheck::no_room: bad_tree(where + ": an htree index block with no room for its checksum");
        case DxBlockCheck::bad_checksum: bad_tree(where + ": htree index checksum does not match");
      }
    } else if (seed && !dir_leaf_checksum_ok(whole, *seed)) {
      bad_tree(where + ": checksum does not match");
    }
    for (std::size_t at = block; at < block + bs;) {
      const std::uint8_t* p = bytes.data() + at;
      if (block + bs - at < 8) bad_tree("a directory entry cut by its block's end");
      const std::uint32_t ino = load_le<std::uint32_t>(p);
      const std::uint32_t rec_len = rec_len_from_disk(load_le<std::uint16_t>(p + 4), bs);
      const std::uint8_t name_len = p[6];
      if (rec_len < 8 || rec_len % 4 != 0 || rec_len > block + bs - at || 8u + name_len > rec_len)
        bad_tree("a directory entry with record length " + std::to_string(rec_len) + " at byte " +
             std::to_string(at - block) + " of a block");
      if (ino != 0 && name_len > 0) {
        std::string name(reinterpret_cast<const char*>(p + 8), name_len);
        if (ino > info_.super.inodes_count) bad_tree("entry " + name + " names inode " + std::to_string(ino));
        if (name != "." && name != "..") out.push_back({ino, static_cast<FileType>(p[7] & 7), std::move(name)});
      }
      at += rec_len;
    }
  }
  return out;
}

std::optional<TreeReader::Found> TreeReader::lookup(std::string_view path) const {
  Found at{kRootIno, read_inode(source_, info_, kRootIno)};
  std::size_t depth = 0;
  for (std::size_t start = 0; start < path.size();) {
    const std::size_t end = std::min(path.find('/', start), path.size());
    const std::string_view part = path.substr(start, end - start);
    start = end + 1;
    if (part.empty() || part == ".") continue;
    if (++depth > kMaxDepth) bad_tree("a path of more than " + std::to_string(kMaxDepth) + " components");
    if ((at.inode.mode & kModeTypeMask) != kModeDir) return std::nullopt;  // a file where a directory was named
    const std::vector<DirEntry> list = entries(at);
    const auto it = std::find_if(list.begin(), list.end(), [&](const DirEntry& e) { return e.name == part; });
    if (it == list.end()) return std::nullopt;
    at = {it->ino, read_inode(source_, info_, it->ino)};
    // The kernel's lookup refuses an entry whose inode has no links left
    // (deleted, or never used): ESTALE, not a missing name.
    if (at.inode.links == 0 || at.inode.mode == 0)
      bad_tree("entry " + std::string(part) + " names inode " + std::to_string(it->ino) + ", which has no links (deleted)");
  }
  return at;
}

}  // namespace fscore::ext4
