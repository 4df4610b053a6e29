// SPDX-License-Identifier: BSD-3-Clause
#include "fscore/ext4/extent_tree.h"

#include <stdexcept>
#include <string>

#include "fscore/crc32c.h"
#include "fscore/endian.h"
#include "fscore/ext4/inode.h"

namespace fscore::ext4 {
namespace {

constexpr std::size_t kHeaderSize = 12;
constexpr std::size_t kEntrySize = 12;
constexpr std::uint16_t kRootEntries = 4;
constexpr std::uint16_t kMaxDepth = 5;  // EXT4_MAX_EXTENT_DEPTH

struct Entry {  // a leaf extent (depth 0) or an index entry
  std::uint32_t logical;
  std::uint64_t physical;
  std::uint32_t length;  // leaves only
};

[[noreturn]] void bad_extent_tree(const std::string& what) { throw std::runtime_error("extent tree: " + what); }

[[noreturn]] void fail_block_size(std::uint32_t block_size) {
  bad_extent_tree("block size " + std::to_string(block_size) + " is not a power of two from 1024 to 65536");
}

// Entries a tree block holds; ext4's blocks are 1 KiB to 64 KiB, a power of
// two. Small enough to inline, so the compiler knows the blocks are not empty.
std::uint16_t node_capacity(std::uint32_t block_size) {
  if (block_size < 1024 || block_size > 65536 || (block_size & (block_size - 1)) != 0) fail_block_size(block_size);
  return static_cast<std::uint16_t>((block_size - kHeaderSize) / kEntrySize);
}

void write_node(std::uint8_t* p, std::span<const Entry> entries, std::uint16_t max, std::uint16_t depth) {
  store_le<std::uint16_t>(p + 0, kExtentMagic);
  store_le<std::uint16_t>(p + 2, static_cast<std::uint16_t>(entries.size()));
  store_le<std::uint16_t>(p + 4, max);
  store_le<std::uint16_t>(p + 6, depth);
  store_le<std::uint32_t>(p + 8, 0);
  std::uint8_t* e = p + kHeaderSize;
  for (const Entry& entry : entries) {
    store_le<std::uint32_t>(e + 0, entry.logical);
    if (depth == 0) {  // ee_len, ee_start_hi, ee_start_lo
      store_le<std::uint16_t>(e + 4, static_cast<std::uint16_t>(entry.length));
      store_le<std::uint16_t>(e + 6, static_cast<std::uint16_t>(entry.physical >> 32));
      store_le<std::uint32_t>(e + 8, static_cast<std::uint32_t>(entry.physical));
    } else {  // ei_leaf_lo, ei_leaf_hi
      store_le<std::uint32_t>(e + 4, static_cast<std::uint32_t>(entry.physical));
      store_le<std::uint16_t>(e + 8, static_cast<std::uint16_t>(entry.physical >> 32));
      store_le<std::uint16_t>(e + 10, 0);
    }
    e += kEntrySize;
  }
}

// A tree block's metadata_csum tail: the crc32c of the header and eh_max
// entries under the inode's seed, right after them.
void check_tail(std::span<const std::uint8_t> block, std::uint32_t seed, std::uint64_t at) {
  const std::uint16_t max = load_le<std::uint16_t>(block.data() + 4);
  const std::size_t tail = kHeaderSize + std::size_t{max} * kEntrySize;
  if (load_le<std::uint16_t>(block.data()) != kExtentMagic) bad_extent_tree("bad magic in block " + std::to_string(at));
  if (tail + 4 > block.size()) bad_extent_tree("no room for the checksum in block " + std::to_string(at));
  if (load_le<std::uint32_t>(block.data() + tail) != crc32c(seed, block.data(), tail))
    bad_extent_tree("block " + std::to_string(at) + ": checksum does not match");
}

}  // namespace

std::vector<Extent> split_long_extents(std::span<const Extent> runs) {
  std::vector<Extent> out;
  for (Extent run : runs) {
    while (run.length > 0) {
      const std::uint32_t n = std::min(run.length, kMaxExtentLength);
      out.push_back({run.logical, run.physical, n});
      run.logical += n;
      run.physical += n;
      run.length -= n;
    }
  }
  return out;
}

std::uint64_t extent_tree_blocks(std::uint64_t count, std::uint32_t block_size) {
  const std::uint64_t cap = node_capacity(block_size);
  std::uint64_t total = 0;
  while (count > kRootEntries) {
    count = (count + cap - 1) / cap;
    total += count;
  }
  return total;
}

ExtentTree build_extent_tree(std::span<const Extent> extents, std::uint32_t block_size, std::uint32_t ino,
                             std::uint32_t generation, std::uint32_t csum_seed,
                             const std::function<std::uint64_t()>& allocate) {
  std::vector<Entry> level;
  level.reserve(extents.size());
  for (const Extent& x : split_long_extents(extents)) level.push_back({x.logical, x.physical, x.length});
  ExtentTree tree;
  const std::uint16_t cap = node_capacity(block_size);
  const std::size_t tail = kHeaderSize + std::size_t{cap} * kEntrySize;
  const std::uint32_t seed = inode_csum_seed(csum_seed, ino, generation);
  std::uint16_t depth = 0;
  while (level.size() > kRootEntries) {
    std::vector<Entry> parents;
    for (std::size_t i = 0; i < level.size(); i += cap) {
      const std::size_t n = std::min<std::size_t>(cap, level.size() - i);
      std::vector<std::uint8_t> block(block_size, 0);
      write_node(block.data(), std::span(level).subspan(i, n), cap, depth);
      store_le<std::uint32_t>(block.data() + tail, crc32c(seed, block.data(), tail));
      const std::uint64_t at = allocate();
      parents.push_back({level[i].logical, at, 0});
      tree.blocks.emplace_back(at, std::move(block));
    }
    level = std::move(parents);
    if (++depth > kMaxDepth) bad_extent_tree("too many extents for a tree of depth 5");
  }
  write_node(tree.root.data(), level, kRootEntries, depth);
  return tree;
}

std::vector<Extent> read_extent_tree(const std::array<std::uint8_t, 60>& root, const BlockSource& source,
                                     std::uint32_t block_size, std::uint64_t blocks_count,
                                     std::size_t max_extents, std::optional<std::uint32_t> inode_seed) {
  std::vector<Extent> out;
  std::size_t nodes = 0;  // index entries may point at empty leaves: bound the reads too
  // Walks one node: `p` holds `bytes` of it; `expected_depth` is what the
  // parent says (or -1 at the root).
  std::function<void(const std::uint8_t*, std::size_t, int)> walk = [&](const std::uint8_t* p, std::size_t bytes,
                                                                        int expected_depth) {
    if (load_le<std::uint16_t>(p) != kExtentMagic) bad_extent_tree("bad magic");
    const std::uint16_t entries = load_le<std::uint16_t>(p + 2);
    const std::uint16_t max = load_le<std::uint16_t>(p + 4);
    const std::uint16_t depth = load_le<std::uint16_t>(p + 6);
    if (max == 0 || kHeaderSize + std::size_t{max} * kEntrySize > bytes) bad_extent_tree("entry capacity larger than its node");
    if (entries > max) bad_extent_tree("more entries than the node holds");
    if (depth > kMaxDepth) bad_extent_tree("depth " + std::to_string(depth) + " is more than 5");
    if (expected_depth >= 0 && depth != expected_depth) bad_extent_tree("a child's depth does not follow its parent's");
    const std::uint8_t* e = p + kHeaderSize;
    for (std::uint16_t i = 0; i < entries; ++i, e += kEntrySize) {
      const std::uint32_t logical = load_le<std::uint32_t>(e);
      if (depth == 0) {
        std::uint32_t len = load_le<std::uint16_t>(e + 4);
        const bool unwritten = len > kMaxExtentLength;
        if (unwritten) len -= kMaxExtentLength;
        const std::uint64_t start =
            load_le<std::uint32_t>(e + 8) | std::uint64_t{load_le<std::uint16_t>(e + 6)} << 32;
        if (len == 0 || start >= blocks_count || len > blocks_count - start) bad_extent_tree("an extent lies outside the device");
        if (!out.empty() && logical < std::uint64_t{out.back().logical} + out.back().length)
          bad_extent_tree("extents overlap or are out of order");
        if (out.size() >= max_extents) bad_extent_tree("more than " + std::to_string(max_extents) + " extents");
        out.push_back({logical, start, len, unwritten});
      } else {
        const std::uint64_t leaf = load_le<std::uint32_t>(e + 4) | std::uint64_t{load_le<std::uint16_t>(e + 8)} << 32;
        if (leaf >= blocks_count) bad_extent_tree("an index points outside the device");
        if (++nodes > max_extents + 64) bad_extent_tree("more tree blocks than extents");
        std::vector<std::uint8_t> block(block_size);
        source.read(leaf * block_size, block);
        if (inode_seed) check_tail(block, *inode_seed, leaf);
        walk(block.data(), block.size(), depth - 1);
      }
    }
  };
  walk(root.data(), root.size(), -1);
  return out;
}

}  // namespace fscore::ext4
