// SPDX-License-Identifier: BSD-3-Clause
#include "fscore/ext4/image_builder.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "fscore/crc32c.h"
#include "fscore/ext4/features.h"

namespace fscore::ext4 {
namespace {

constexpr std::uint64_t kMinJournalBlocks = 1024;       // JBD2_MIN_JOURNAL_BLOCKS
constexpr std::uint64_t kMke2fsMaxJournalBlocks = 10240000;   // mke2fs's upper bound
constexpr std::size_t kChunkBytes = std::size_t{1} << 20;

GeometryRequest geometry_request(const ImageOptions& o) {
  GeometryRequest r;
  r.device_bytes = o.device_bytes;
  r.block_size = o.block_size;
  r.inode_ratio = o.inode_ratio;
  return r;
}

std::uint16_t file_type_mode(FileType type) {
  switch (type) {
    case FileType::kFifo: return kModeFifo;
    case FileType::kSocket: return kModeSocket;
    case FileType::kChar: return kModeChar;
    case FileType::kBlock: return kModeBlock;
    default: throw std::invalid_argument("add_special takes a FIFO, a socket or a device node");
  }
}

void check_name(std::string_view name) {
  if (name.empty() || name.size() > kMaxNameLength)
    throw std::invalid_argument("name of " + std::to_string(name.size()) + " bytes: ext4 takes 1 to 255");
  if (name == "." || name == ".." || name.find('/') != std::string_view::npos ||
      name.find('\0') != std::string_view::npos)
    throw std::invalid_argument("name '" + std::string(name) + "' is not a file name");
}

}  // namespace

ImageBuilder::ImageBuilder(const ImageOptions& options, BlockSink* sink)
    : options_(options),
      sink_(sink),
      geometry_(plan_geometry(geometry_request(options))),
      map_(geometry_.first_data_block, geometry_.blocks) {
  if (options_.label.size() > 16) throw std::invalid_argument("label '" + options_.label + "' is longer than 16 bytes");
  if (options_.journal == JournalKind::kExternal && is_nil(options_.external_journal_uuid))
    throw std::invalid_argument("an external journal needs the journal device's uuid");
  csum_seed_ = crc32c(~0u, options_.uuid.data(), options_.uuid.size());
  plan_group_metadata();
  if (options_.journal == JournalKind::kInternal) {
    const bool asked = options_.journal_blocks != 0;
    plan_journal(asked ? options_.journal_blocks : default_journal_blocks(geometry_.blocks), asked);
  }
  data_goal_ = geometry_.group_first_block(0);

  // Inodes 1..10 are reserved (zero but for root and journal), 11 is lost+found.
  inodes_.resize(kFirstIno - 1);
  Attributes root;
  root.atime = root.mtime = root.ctime = root.crtime = options_.now;
  inodes_[kRootIno - 1].mode = static_cast<std::uint16_t>(kModeDir | 0755);
  set_root_attributes(root);
  directories_[kRootIno].parent = kRootIno;
  Attributes lost = root;
  lost.permissions = 0700;
  add_directory(kRootIno, "lost+found", lost);
}

ImageBuilder::~ImageBuilder() = default;

void ImageBuilder::plan_group_metadata() {
  const Geometry& g = geometry_;
  for (std::uint32_t group = 0; group < g.groups; ++group)
    if (g.has_super(group)) map_.mark(g.group_first_block(group), 1 + g.desc_blocks);
  block_bitmap_.resize(g.groups);
  inode_bitmap_.resize(g.groups);
  inode_table_.resize(g.groups);
  // flex_bg: a flex group's bitmaps and inode tables are packed at the start
  // of its first group, block bitmaps first, then inode bitmaps, then tables.
  auto place = [&](std::uint64_t count, std::uint64_t& goal) {
    const auto at = map_.allocate_contiguous(count, goal);
    if (!at) throw NoSpaceError("no room for the group metadata: the device is too small");
    goal = *at + count;
    return *at;
  };
  for (std::uint32_t leader = 0; leader < g.groups; leader += g.flex_bg_size) {
    const std::uint32_t end = std::min(g.groups, leader + g.flex_bg_size);
    std::uint64_t goal = g.group_first_block(leader);
    for (std::uint32_t group = leader; group < end; ++group) block_bitmap_[group] = place(1, goal);
    for (std::uint32_t group = leader; group < end; ++group) inode_bitmap_[group] = place(1, goal);
    for (std::uint32_t group = leader; group < end; ++group) inode_table_[group] = place(g.inode_table_blocks, goal);
  }
}

void ImageBuilder::plan_journal(std::uint64_t blocks, bool asked) {
  if (blocks == 0)  // mke2fs makes no journal below 2048 blocks
    throw JournalSizeError("a filesystem of " + std::to_string(geometry_.blocks) +
                           " blocks is too small for a journal (mke2fs makes none below 2048 blocks)");
  // Like mke2fs (misc/util.c): a size asked for may take at most half of
  // what is free once the metadata is placed; its own default always fits.
  const std::uint64_t limit = std::min(kMke2fsMaxJournalBlocks, asked ? map_.free_blocks() / 2 : map_.free_blocks());
  if (blocks < kMinJournalBlocks || blocks > limit)
    throw JournalSizeError("a journal of " + std::to_string(blocks) + " blocks: a filesystem of " +
                           std::to_string(geometry_.blocks) + " blocks takes " + std::to_string(kMinJournalBlocks) +
                           " to " + std::to_string(limit) + " (half its free blocks)");
  // Like mke2fs: in the middle of the filesystem, at the start of a flex group.
  std::uint32_t group = static_cast<std::uint32_t>((geometry_.blocks - geometry_.first_data_block) / 2 /
                                                   geometry_.blocks_per_group);
  if (geometry_.groups > geometry_.flex_bg_size) group -= group % geometry_.flex_bg_size;
  const std::uint64_t goal = geometry_.group_first_block(group);
  if (const auto at = map_.allocate_contiguous(blocks, goal)) {
    journal_runs_.push_back({*at, blocks});
  } else {
    journal_runs_ = map_.allocate(blocks, goal);
  }
  std::vector<Extent> runs;
  std::uint64_t logical = 0;
  for (const BlockRun& r : journal_runs_) {
    runs.push_back({static_cast<std::uint32_t>(logical), r.start, static_cast<std::uint32_t>(r.count)});
    logical += r.count;
  }
  inodes_.resize(kJournalIno);
  Inode& j = inodes_[kJournalIno - 1];
  j.mode = static_cast<std::uint16_t>(kModeRegular | 0600);
  j.links = 1;
  j.size = blocks * geometry_.block_size;
  j.atime = j.mtime = j.ctime = j.crtime = options_.now;
  set_extents(kJournalIno, split_long_extents(runs), blocks);
}

void ImageBuilder::set_root_attributes(const Attributes& a) {
  Inode& root = inodes_[kRootIno - 1];
  root.mode = static_cast<std::uint16_t>(kModeDir | (a.permissions & 07777));
  root.uid = a.uid;
  root.gid = a.gid;
  root.atime = a.atime;
  root.mtime = a.mtime;
  root.ctime = a.ctime;
  root.crtime = a.crtime;
}

std::uint32_t ImageBuilder::new_inode(std::uint16_t mode, const Attributes& a) {
  if (finished_) throw std::logic_error("image builder: add after finish");
  if (inodes_.size() < kFirstIno - 1) inodes_.resize(kFirstIno - 1);
  if (inodes_.size() >= geometry_.inodes)
    throw NoSpaceError("out of inodes: the filesystem has " + std::to_string(geometry_.inodes));
  Inode n;
  n.mode = static_cast<std::uint16_t>(mode | (a.permissions & 07777));
  n.uid = a.uid;
  n.gid = a.gid;
  n.atime = a.atime;
  n.mtime = a.mtime;
  n.ctime = a.ctime;
  n.crtime = a.crtime;
  n.links = 1;
  inodes_.push_back(n);
  return static_cast<std::uint32_t>(inodes_.size());
}

ImageBuilder::Directory& ImageBuilder::directory(std::uint32_t ino) {
  const auto it = directories_.find(ino);
  if (it == directories_.end()) throw std::invalid_argument("inode " + std::to_string(ino) + " is not a directory");
  return it->second;
}

void ImageBuilder::link(std::uint32_t parent, std::string_view name, std::uint32_t ino, FileType type) {
  check_name(name);
  Directory& dir = directory(parent);
  if (!dir.names.emplace(name).second)
    throw std::invalid_argument("name '" + std::string(name) + "' is already in directory inode " +
                                std::to_string(parent));
  dir.entries.push_back({ino, type, std::string(name)});
}

std::uint32_t ImageBuilder::add_directory(std::uint32_t parent, std::string_view name, const Attributes& a) {
  check_name(name);
  directory(parent);
  const std::uint32_t ino = new_inode(kModeDir, a);
  link(parent, name, ino, FileType::kDirectory);
  directories_[ino].parent = parent;
  ++directories_[parent].subdirs;
  return ino;
}

std::vector<Extent> ImageBuilder::allocate_extents(std::uint64_t logical, std::uint64_t blocks) {
  std::vector<Extent> extents;
  if (blocks == 0) return extents;
  for (const BlockRun& r : map_.allocate(blocks, data_goal_)) {
    extents.push_back({static_cast<std::uint32_t>(logical), r.start, static_cast<std::uint32_t>(r.count)});
    logical += r.count;
    data_goal_ = r.start + r.count;
  }
  return split_long_extents(extents);
}

void ImageBuilder::set_extents(std::uint32_t ino, const std::vector<Extent>& extents, std::uint64_t data_blocks) {
  Inode& n = inodes_[ino - 1];
  std::uint64_t goal = extents.empty() ? data_goal_ : extents.back().physical + extents.back().length;
  const ExtentTree tree =
      build_extent_tree(extents, geometry_.block_size, ino, n.generation, csum_seed_, [&]() -> std::uint64_t {
        const std::vector<BlockRun> run = map_.allocate(1, goal);
        goal = run.front().start + 1;
        return run.front().start;
      });
  for (const auto& [block, bytes] : tree.blocks) write(block, bytes);
  n.block = tree.root;
  n.flags |= kExtentsFl;
  n.blocks_512 = (data_blocks + tree.blocks.size()) * (geometry_.block_size / 512);
}

void ImageBuilder::write(std::uint64_t block, std::span<const std::uint8_t> bytes) {
  if (sink_ != nullptr) sink_->write(block * geometry_.block_size, bytes);
}

void ImageBuilder::write_file_data(const std::vector<Extent>& extents, std::uint64_t size, const FileReader& read) {
  if (sink_ == nullptr) return;
  const std::uint64_t bs = geometry_.block_size;
  chunk_.resize(kChunkBytes);
  for (const Extent& x : extents) {
    std::uint64_t done = 0;
    const std::uint64_t bytes = std::uint64_t{x.length} * bs;
    while (done < bytes) {
      const std::uint64_t n = std::min<std::uint64_t>(kChunkBytes, bytes - done);
      const std::uint64_t offset = std::uint64_t{x.logical} * bs + done;
      const std::uint64_t in_file = offset < size ? std::min(n, size - offset) : 0;
      std::span<std::uint8_t> buffer(chunk_.data(), n);
      if (in_file > 0) read(offset, buffer.first(in_file));
      std::fill(buffer.begin() + static_cast<std::ptrdiff_t>(in_file), buffer.end(), std::uint8_t{0});
      sink_->write((x.physical * bs) + done, buffer);
      done += n;
    }
  }
}

std::uint32_t ImageBuilder::add_file(std::uint32_t parent, std::string_view name, const Attributes& a,
                                     std::uint64_t size, std::span<const ByteRange> data, const FileReader& read) {
  check_name(name);
  directory(parent);
  const std::uint64_t bs = geometry_.block_size;
  const std::uint64_t file_blocks = div_ceil(size, bs);
  if (file_blocks > 0xFFFFFFFFull) throw std::invalid_argument("file '" + std::string(name) + "' is larger than ext4 takes");
  // The data ranges, widened to whole blocks and merged.
  std::vector<BlockRun> wanted;
  for (const ByteRange& r : data) {
    if (r.length == 0 || r.offset >= size) continue;
    const std::uint64_t first = r.offset / bs;
    const std::uint64_t end = std::min(file_blocks, div_ceil(std::min(size, r.offset + r.length), bs));
    if (!wanted.empty() && first <= wanted.back().start + wanted.back().count) {
      wanted.back().count = std::max(wanted.back().count, end - wanted.back().start);
    } else {
      wanted.push_back({first, end - first});
    }
  }
  const std::uint32_t ino = new_inode(kModeRegular, a);
  std::vector<Extent> extents;
  std::uint64_t data_blocks = 0;
  for (const BlockRun& r : wanted) {
    const std::vector<Extent> more = allocate_extents(r.start, r.count);
    extents.insert(extents.end(), more.begin(), more.end());
    data_blocks += r.count;
  }
  write_file_data(extents, size, read);
  inodes_[ino - 1].size = size;
  set_extents(ino, extents, data_blocks);
  link(parent, name, ino, FileType::kRegular);
  return ino;
}

std::uint32_t ImageBuilder::add_symlink(std::uint32_t parent, std::string_view name, const Attributes& a,
                                        std::string_view target) {
  check_name(name);
  directory(parent);
  // The kernel keeps a target and its NUL in one block (ext4_symlink).
  if (target.empty() || target.size() >= geometry_.block_size)
    throw std::invalid_argument("symlink '" + std::string(name) + "': a target of " + std::to_string(target.size()) +
                                " bytes (this block size takes 1 to " + std::to_string(geometry_.block_size - 1) + ")");
  const std::uint32_t ino = new_inode(kModeSymlink, a);
  Inode& n = inodes_[ino - 1];
  n.size = target.size();
  if (target.size() < n.block.size()) {  // a fast symlink: the target lives in i_block
    std::memcpy(n.block.data(), target.data(), target.size());
  } else {
    const std::vector<Extent> extents = allocate_extents(0, 1);
    std::vector<std::uint8_t> block(geometry_.block_size, 0);
    std::memcpy(block.data(), target.data(), target.size());
    write(extents.front().physical, block);
    set_extents(ino, extents, 1);
  }
  link(parent, name, ino, FileType::kSymlink);
  return ino;
}

std::uint32_t ImageBuilder::add_special(std::uint32_t parent, std::string_view name, const Attributes& a,
                                        FileType type, std::uint32_t major, std::uint32_t minor) {
  check_name(name);
  directory(parent);
  const std::uint32_t ino = new_inode(file_type_mode(type), a);
  if (type == FileType::kChar || type == FileType::kBlock) encode_device_number(major, minor, inodes_[ino - 1].block);
  link(parent, name, ino, type);
  return ino;
}

void ImageBuilder::add_hard_link(std::uint32_t parent, std::string_view name, std::uint32_t ino) {
  if (ino < kFirstIno || ino > inodes_.size()) throw std::invalid_argument("hard link to unknown inode " + std::to_string(ino));
  Inode& n = inodes_[ino - 1];
  if ((n.mode & kModeTypeMask) == kModeDir) throw std::invalid_argument("hard link '" + std::string(name) + "' to a directory");
  if (n.links >= kLinkMax) throw std::invalid_argument("inode " + std::to_string(ino) + " has 65000 links already");
  FileType type = FileType::kRegular;
  switch (n.mode & kModeTypeMask) {
    case kModeSymlink: type = FileType::kSymlink; break;
    case kModeFifo: type = FileType::kFifo; break;
    case kModeSocket: type = FileType::kSocket; break;
    case kModeChar: type = FileType::kChar; break;
    case kModeBlock: type = FileType::kBlock; break;
    default: break;
  }
  link(parent, name, ino, type);
  ++n.links;
}

}  // namespace fscore::ext4
