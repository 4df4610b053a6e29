// SPDX-License-Identifier: BSD-3-Clause
#include "fscore/ext4/tree_reader.h"

#include <algorithm>
#include <stdexcept>

#include "fscore/endian.h"
#include "fscore/ext4/dir_block.h"
#include "fscore/ext4/dir_hash.h"
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

std::optional<DirEntry> TreeReader::find(const Found& directory, std::string_view name) const {
  const bool htree = (info_.super.feature_compat & compat::kDirIndex) != 0 && (directory.inode.flags & kIndexFl) != 0;
  if (htree && (directory.inode.mode & kModeTypeMask) == kModeDir && directory.inode.size % info_.block_size == 0) {
    bool bad_index = false;
    const std::vector<std::uint8_t> bytes = contents(directory, std::uint64_t{1} << 30);
    std::optional<DirEntry> found = find_by_hash(directory, bytes, name, bad_index);
    if (!bad_index) return found;
  }
  const std::vector<DirEntry> list = entries(directory);
  const auto it = std::find_if(list.begin(), list.end(), [&](const DirEntry& e) { return e.name == name; });
  if (it == list.end()) return std::nullopt;
  return *it;
}

std::optional<DirEntry> TreeReader::find_by_hash(const Found& dir, const std::vector<std::uint8_t>& bytes,
                                                 std::string_view name, bool& bad_index) const {
  const std::uint32_t bs = info_.block_size;
  const std::uint64_t blocks = bytes.size() / bs;
  const std::optional<std::uint32_t> seed = seed_of(dir);
  const std::uint32_t tail = seed ? 8 : 0;  // struct dx_tail
  const std::string where = "directory inode " + std::to_string(dir.ino);
  const auto give_up = [&] {
    bad_index = true;
    return std::nullopt;
  };
  const auto block_of = [&](std::uint64_t b) {
    if (b >= blocks) bad_tree(where + ": its index names block " + std::to_string(b) + ", past its size");
    return std::span<const std::uint8_t>(bytes.data() + b * bs, bs);
  };
  // An index block (the root, or a node whose one entry covers the block),
  // its checksum checked as ext4_read_dirblock(INDEX) checks it.
  const auto index_block = [&](std::uint64_t b) {
    const std::span<const std::uint8_t> block = block_of(b);
    if (b != 0 && rec_len_from_disk(load_le<std::uint16_t>(block.data() + 4), bs) != bs)
      bad_tree(where + ", block " + std::to_string(b) + ": a leaf block where the index names an index block");
    if (seed && dx_block_checksum(block, *seed) != DxBlockCheck::ok)
      bad_tree(where + ", block " + std::to_string(b) + ": htree index checksum does not match");
    return block;
  };
  struct Frame {
    std::span<const std::uint8_t> entries;  // from the count/limit header
    std::uint32_t count = 0;
    std::uint32_t at = 0;
  };
  const auto hash_at = [](const Frame& f, std::uint32_t i) { return load_le<std::uint32_t>(f.entries.data() + 8 * i); };
  const auto block_at = [](const Frame& f, std::uint32_t i) {
    return load_le<std::uint32_t>(f.entries.data() + 8 * i + 4) & 0x0fffffffu;
  };

  // The root (dx_probe): its info, the hash, then down the levels.
  const std::span<const std::uint8_t> root = index_block(0);
  const std::uint8_t version = root[28], info_length = root[29], indirect = root[30], flags = root[31];
  if (version != 0 && version != 1 && version != 2) return give_up();  // SipHash needs names' hashes in entries
  if ((flags & 1) != 0) return give_up();
  const unsigned levels = (info_.super.feature_incompat & incompat::kLargeDir) != 0 ? 3 : 2;
  if (indirect >= levels) return give_up();
  const std::size_t first = 24 + std::size_t{info_length};
  if (first + 8 > bs) return give_up();
  const std::uint32_t root_limit = (bs - 24 - info_length - tail) / 8;
  const std::uint8_t hashed = version <= 2 && (info_.super.flags & kFlagsUnsignedHash) != 0 ? version + 3 : version;
  const std::optional<std::uint32_t> hash = dir_hash(hashed, info_.super.hash_seed, name);
  if (!hash) return give_up();

  std::vector<Frame> frames;
  std::vector<std::uint64_t> path{0};
  // Descends from `entries` (a root's or a node's) to the leaf level.
  const auto descend = [&](std::span<const std::uint8_t> entries, std::uint32_t limit, bool probe) -> bool {
    for (;;) {
      Frame f;
      f.entries = entries;
      const std::uint32_t entry_limit = load_le<std::uint16_t>(entries.data());
      f.count = load_le<std::uint16_t>(entries.data() + 2);
      if (entry_limit != limit || f.count == 0 || f.count > entry_limit || 8u * f.count > entries.size()) return false;
      if (probe) {
        std::uint32_t lo = 1, hi = f.count;  // the last entry whose hash is at most the name's
        while (lo < hi) {
          const std::uint32_t mid = lo + (hi - lo) / 2;
          if (hash_at(f, mid) > *hash) hi = mid;
          else lo = mid + 1;
        }
        f.at = lo - 1;
      }
      frames.push_back(f);
      const std::uint64_t child = block_at(f, f.at);
      if (std::find(path.begin(), path.end(), child) != path.end()) return false;  // a cycle
      if (frames.size() > indirect) return true;
      path.push_back(child);
      const std::span<const std::uint8_t> node = index_block(child);
      limit = (bs - 8 - tail) / 8;
      entries = node.subspan(8);
    }
  };
  if (!descend(root.subspan(first), root_limit, true)) return give_up();

  for (;;) {
    // The leaf: its checksum, then the name (ext4_search_dir: an entry is
    // checked only where the name matches; a record length of 0 ends it).
    const std::uint64_t b = block_at(frames.back(), frames.back().at);
    const std::span<const std::uint8_t> leaf = block_of(b);
    const bool looks_index = b == 0 || rec_len_from_disk(load_le<std::uint16_t>(leaf.data() + 4), bs) == bs;
    if (seed && !looks_index && !dir_leaf_checksum_ok(leaf, *seed))
      bad_tree(where + ", block " + std::to_string(b) + ": checksum does not match");
    for (std::size_t at = 0; at + 8 < bs;) {
      const std::uint8_t* p = leaf.data() + at;
      const std::uint32_t ino = load_le<std::uint32_t>(p);
      const std::uint32_t rec_len = rec_len_from_disk(load_le<std::uint16_t>(p + 4), bs);
      const std::uint8_t name_len = p[6];
      if (ino != 0 && name_len == name.size() && at + 8 + name_len <= bs &&
          std::string_view(reinterpret_cast<const char*>(p + 8), name_len) == name) {
        const std::uint32_t needed = (8u + name_len + 3) & ~3u;
        if (rec_len < 12 || rec_len % 4 != 0 || rec_len < needed || at + rec_len > bs || ino > info_.super.inodes_count)
          return give_up();
        return DirEntry{ino, static_cast<FileType>(p[7] & 7), std::string(name)};
      }
      if (rec_len == 0) return give_up();
      at += rec_len;
    }
    // Not there: the next leaf, while the hash collision continues
    // (ext4_htree_next_block).
    std::size_t level = frames.size();
    while (level > 0 && ++frames[level - 1].at >= frames[level - 1].count) --level;
    if (level == 0) return std::nullopt;
    if ((hash_at(frames[level - 1], frames[level - 1].at) & ~1u) != *hash) return std::nullopt;
    for (std::size_t below = level; below < frames.size(); ++below) {
      const std::span<const std::uint8_t> node = index_block(block_at(frames[below - 1], frames[below - 1].at));
      frames[below].entries = node.subspan(8);
      frames[below].count = load_le<std::uint16_t>(node.data() + 8 + 2);
      frames[below].at = 0;
      if (frames[below].count == 0 || 8u * frames[below].count > frames[below].entries.size()) return give_up();
    }
  }
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
    const std::optional<DirEntry> it = find(at, part);
    if (!it) return std::nullopt;
    at = {it->ino, read_inode(source_, info_, it->ino)};
    // The kernel's lookup refuses an entry whose inode has no links left
    // (deleted, or never used): ESTALE, not a missing name.
    if (at.inode.links == 0 || at.inode.mode == 0)
      bad_tree("entry " + std::string(part) + " names inode " + std::to_string(it->ino) + ", which has no links (deleted)");
  }
  return at;
}

}  // namespace fscore::ext4
