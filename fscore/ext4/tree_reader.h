// SPDX-License-Identifier: BSD-3-Clause
// TreeReader: the files and directories of an ext4 image, read back by path,
// as the crash lab's fast path checks a crash state's facts without a
// kernel. A name is looked up as the kernel's ext4_find_entry looks it up:
// in an htree directory by its hash (dir_hash.h), through the index to one
// leaf (and the next ones while a collision continues), falling back to the
// linear walk where the kernel gives up on the index (a root or node that
// does not hold together, a bad entry where the name is); elsewhere block
// by block. A listing walks every block (an htree's index blocks read as
// empty entries); file contents through extent trees or block maps, holes and
// unwritten extents reading as zeroes. Inline data is refused. Images are
// untrusted (a crash state may hold anything): every field is checked before
// it is used and a broken image is a std::runtime_error saying what is
// wrong, never a crash. With metadata_csum every metadata block read is
// checked as the kernel checks it before it trusts the block: inodes,
// directory leaf blocks (their tail), htree index blocks (their dx_tail),
// extent tree blocks (their tail); and an entry naming an inode with no
// links left is refused, as the kernel's lookup refuses it (ESTALE). Pure:
// it reads through a BlockSource.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fscore/block_io.h"
#include "fscore/ext4/dir_block.h"
#include "fscore/ext4/image_reader.h"
#include "fscore/ext4/inode.h"

namespace fscore::ext4 {

class TreeReader {
 public:
  // Reads and checks the superblock (read_image).
  explicit TreeReader(const BlockSource& source);

  struct Found {
    std::uint32_t ino = 0;
    Inode inode;
  };
  // `path` from the root, '/' between components ("" or "." is the root);
  // nullopt when a component is missing.
  std::optional<Found> lookup(std::string_view path) const;
  // A directory's entries ("." and ".." left out), in the order of its blocks.
  std::vector<DirEntry> entries(const Found& directory) const;
  // A regular file's bytes, i_size of them (at most `limit`: beyond it, a
  // std::runtime_error).
  std::vector<std::uint8_t> contents(const Found& file, std::uint64_t limit = std::uint64_t{1} << 32) const;

  // The written extents holding a file's first `bytes` bytes (at most its
  // size), by logical block; the blocks between them read as zeroes.
  std::vector<Extent> extents(const Found& file, std::uint64_t bytes) const;
  const BlockSource& source() const { return source_; }

  const ImageInfo& info() const { return info_; }

 private:
  // The file's data blocks by logical block: (device block, unwritten);
  // absent: a hole.
  std::vector<Extent> mapping(const Found& file, std::uint64_t file_blocks) const;
  // The inode's seed for its blocks' checksums; nullopt without metadata_csum.
  std::optional<std::uint32_t> seed_of(const Found& file) const;
  // `name` in `directory`, as the kernel's lookup finds it.
  std::optional<DirEntry> find(const Found& directory, std::string_view name) const;
  // The htree lookup (ext4_dx_find_entry) in a directory whose blocks are
  // `bytes`: the entry, nullopt when the index says it is not there, or
  // `bad_index` set where the kernel gives up on the index (ERR_BAD_DX_DIR)
  // and searches every block. Throws what the kernel's lookup fails with.
  std::optional<DirEntry> find_by_hash(const Found& directory, const std::vector<std::uint8_t>& bytes,
                                       std::string_view name, bool& bad_index) const;

  const BlockSource& source_;
  ImageInfo info_;
};

}  // namespace fscore::ext4
