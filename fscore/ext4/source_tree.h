// SPDX-License-Identifier: BSD-3-Clause
// SourceTree: the files populate copies into an image, as fscore sees them.
// fscore reads a tree only through this interface, so it never touches the
// host itself; the host's directories are one implementation
// (server/lab/host_tree.h), an in-memory tree in the tests another.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "fscore/ext4/dir_block.h"
#include "fscore/ext4/image_builder.h"

namespace fscore::ext4 {

struct SourceEntry {
  std::string name;  // within its directory, as bytes
  std::string path;  // for messages: where the entry is ("/srv/tree/a/b")
  FileType type = FileType::kUnknown;
  Attributes attributes;
  std::uint64_t size = 0;  // a regular file's length, a symlink target's length
  std::uint32_t rdev_major = 0, rdev_minor = 0;  // character and block devices
  // Set for a non-directory with more than one link: entries with the same
  // identity are one file, copied once and linked again.
  std::optional<std::pair<std::uint64_t, std::uint64_t>> link_identity;
  std::uint64_t xattrs = 0;  // extended attributes it has (not copied)
};

// An open regular file.
class SourceFile {
 public:
  virtual ~SourceFile() = default;
  // The byte ranges holding data, ascending; the rest are holes.
  virtual std::vector<ByteRange> data_ranges() = 0;
  // Fills `buffer` from `offset`; throws if the file cannot supply it.
  virtual void read(std::uint64_t offset, std::span<std::uint8_t> buffer) = 0;
};

// An open directory. Errors are thrown, naming the entry's path.
class SourceDirectory {
 public:
  virtual ~SourceDirectory() = default;
  virtual std::vector<SourceEntry> entries() = 0;  // without "." and ".."; any order
  virtual std::unique_ptr<SourceDirectory> open_directory(const SourceEntry& entry) = 0;
  virtual std::unique_ptr<SourceFile> open_file(const SourceEntry& entry) = 0;
  virtual std::string read_link(const SourceEntry& entry) = 0;
};

class SourceTree {
 public:
  virtual ~SourceTree() = default;
  virtual Attributes root_attributes() = 0;
  virtual std::unique_ptr<SourceDirectory> open_root() = 0;
};

}  // namespace fscore::ext4
