// SPDX-License-Identifier: BSD-3-Clause
// ImageBuilder: writes an ext4 filesystem the way mke2fs (and mke2fs -d)
// would, through a BlockSink, without a kernel or e2fsprogs.
//
// The target must read as zeros where nothing is written (a new sparse file
// or a new store): only metadata and file data are written, and the inode
// tables are declared zeroed. Metadata is planned in memory as runs of used
// blocks (BlockMap), so a 16 TiB image costs a few MiB; file data is
// streamed to the sink as files are added; finish() writes the rest.
//
//   ImageBuilder b(options, &sink);
//   auto dir = b.add_directory(ImageBuilder::kRoot, "etc", attrs);
//   b.add_file(dir, "motd", attrs, size, data_ranges, reader);
//   b.finish();
//
// With a null sink nothing is written or read: a dry run that finds out
// whether a tree fits (NoSpaceError) before anything is touched.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "fscore/block_io.h"
#include "fscore/ext4/block_map.h"
#include "fscore/ext4/dir_block.h"
#include "fscore/ext4/extent_tree.h"
#include "fscore/ext4/geometry.h"
#include "fscore/ext4/inode.h"
#include "fscore/uuid.h"

namespace fscore::ext4 {

enum class JournalKind { kNone, kInternal, kExternal };

struct ImageOptions {
  std::uint64_t device_bytes = 0;
  std::uint32_t block_size = 0;      // 0: like mke2fs (1 KiB below 512 MiB, else 4 KiB)
  std::uint32_t inode_ratio = 0;     // 0: like mke2fs
  JournalKind journal = JournalKind::kInternal;
  std::uint64_t journal_blocks = 0;  // internal; 0: mke2fs's size for the filesystem
  Uuid external_journal_uuid{};      // external: the journal device's uuid
  Uuid uuid{};                       // the filesystem's; callers pick a random one
  Uuid hash_seed{};                  // directory hash seed; random too
  std::string label;                 // at most 16 bytes
  Timestamp now;                     // creation time of the filesystem and its first inodes
};

// What a built image looks like, for the server and the tests.
struct ImageLayout {
  Geometry geometry;
  JournalKind journal = JournalKind::kNone;
  std::vector<BlockRun> journal_runs;  // internal journal: its blocks on the device, in log order
  std::uint64_t used_blocks = 0;
  std::uint64_t used_inodes = 0;
  std::vector<BlockRun> free_runs;  // the blocks no file or metadata holds, in order
};

// Owner, permissions and times of a new inode.
struct Attributes {
  std::uint16_t permissions = 0755;  // the low 12 mode bits
  std::uint32_t uid = 0;
  std::uint32_t gid = 0;
  Timestamp atime, mtime, ctime, crtime;
};

// A byte range of a file that holds data; everything else is a hole.
struct ByteRange {
  std::uint64_t offset = 0;
  std::uint64_t length = 0;
};

// Fills `buffer` with the file's bytes at `offset`.
using FileReader = std::function<void(std::uint64_t offset, std::span<std::uint8_t> buffer)>;

class ImageBuilder {
 public:
  static constexpr std::uint32_t kRoot = 2;
  static constexpr std::uint32_t kLostFound = 11;

  // Throws std::invalid_argument for options that make no filesystem (the
  // message names the option) and NoSpaceError when the journal does not fit.
  ImageBuilder(const ImageOptions& options, BlockSink* sink);
  ~ImageBuilder();
  ImageBuilder(const ImageBuilder&) = delete;
  ImageBuilder& operator=(const ImageBuilder&) = delete;

  const Geometry& geometry() const { return geometry_; }

  void set_root_attributes(const Attributes& attributes);
  // Each returns the new inode number. Names are 1..255 bytes without '/'
  // or NUL, not "." or "..", unique in their directory
  // (std::invalid_argument otherwise); a full filesystem raises NoSpaceError.
  std::uint32_t add_directory(std::uint32_t parent, std::string_view name, const Attributes& attributes);
  std::uint32_t add_file(std::uint32_t parent, std::string_view name, const Attributes& attributes,
                         std::uint64_t size, std::span<const ByteRange> data, const FileReader& read);
  std::uint32_t add_symlink(std::uint32_t parent, std::string_view name, const Attributes& attributes,
                            std::string_view target);
  // FIFOs, sockets and device nodes (major and minor for the latter).
  std::uint32_t add_special(std::uint32_t parent, std::string_view name, const Attributes& attributes,
                            FileType type, std::uint32_t major = 0, std::uint32_t minor = 0);
  // Another name for an existing non-directory inode.
  void add_hard_link(std::uint32_t parent, std::string_view name, std::uint32_t ino);

  // Writes directories, inodes, bitmaps, descriptors, superblocks and the
  // journal superblock. Nothing can be added afterwards.
  ImageLayout finish();

 private:
  struct Directory {
    std::uint32_t parent = 0;
    std::uint32_t subdirs = 0;
    std::vector<DirEntry> entries;
    std::unordered_set<std::string> names;
  };

  void plan_group_metadata();
  void plan_journal(std::uint64_t journal_blocks, bool asked);
  std::uint32_t new_inode(std::uint16_t mode, const Attributes& attributes);
  void link(std::uint32_t parent, std::string_view name, std::uint32_t ino, FileType type);
  Directory& directory(std::uint32_t ino);
  // Allocates `blocks` file blocks from the data cursor as extents starting
  // at file block `logical`.
  std::vector<Extent> allocate_extents(std::uint64_t logical, std::uint64_t blocks);
  void set_extents(std::uint32_t ino, const std::vector<Extent>& extents, std::uint64_t data_blocks);
  void write(std::uint64_t block, std::span<const std::uint8_t> bytes);
  void write_file_data(const std::vector<Extent>& extents, std::uint64_t size, const FileReader& read);

  void write_directories();
  void write_journal_superblock();
  void write_inode_tables();
  void write_group_metadata();
  void write_superblocks();

  ImageOptions options_;
  BlockSink* sink_;
  Geometry geometry_;
  std::uint32_t csum_seed_ = 0;
  BlockMap map_;
  std::vector<std::uint64_t> block_bitmap_, inode_bitmap_, inode_table_;  // per group
  std::vector<BlockRun> journal_runs_;
  std::uint64_t data_goal_ = 0;
  std::vector<Inode> inodes_;  // inodes_[ino - 1], allocated in order
  std::unordered_map<std::uint32_t, Directory> directories_;
  std::vector<std::uint8_t> chunk_;  // file data on its way to the sink
  bool finished_ = false;
};

}  // namespace fscore::ext4
