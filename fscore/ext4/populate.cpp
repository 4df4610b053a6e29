// SPDX-License-Identifier: BSD-3-Clause
#include "fscore/ext4/populate.h"

#include <algorithm>
#include <map>
#include <stdexcept>
#include <utility>
#include <vector>

namespace fscore::ext4 {
namespace {

// A full filesystem, said with the path that did not fit.
template <typename Fn>
auto naming(const std::string& path, Fn&& fn) {
  try {
    return fn();
  } catch (const NoSpaceError& e) {
    throw NoSpaceError(path + ": " + e.what());
  }
}

class Walker {
 public:
  explicit Walker(ImageBuilder& builder) : builder_(builder) {}

  void directory(SourceDirectory& dir, std::uint32_t ino) {
    std::vector<SourceEntry> entries = dir.entries();
    std::sort(entries.begin(), entries.end(),
              [](const SourceEntry& a, const SourceEntry& b) { return a.name < b.name; });
    for (const SourceEntry& e : entries) entry(dir, ino, e);
  }

  PopulateCounts counts;

 private:
  void entry(SourceDirectory& dir, std::uint32_t parent, const SourceEntry& e) {
    counts.xattrs_not_copied += e.xattrs;
    if (e.link_identity && e.type != FileType::kDirectory) {
      if (const auto it = seen_.find(*e.link_identity); it != seen_.end()) {
        naming(e.path, [&] { builder_.add_hard_link(parent, e.name, it->second); });
        ++counts.hard_links;
        return;
      }
    }
    std::uint32_t ino = 0;
    switch (e.type) {
      case FileType::kDirectory: {
        const std::unique_ptr<SourceDirectory> sub = dir.open_directory(e);
        if (parent == ImageBuilder::kRoot && e.name == "lost+found") {  // the image has one: fill it
          directory(*sub, ImageBuilder::kLostFound);
          return;
        }
        ino = naming(e.path, [&] { return builder_.add_directory(parent, e.name, e.attributes); });
        ++counts.directories;
        directory(*sub, ino);
        return;
      }
      case FileType::kRegular: ino = file(dir, parent, e); break;
      case FileType::kSymlink: {
        const std::string target = dir.read_link(e);
        ++counts.symlinks;
        ino = naming(e.path, [&] { return builder_.add_symlink(parent, e.name, e.attributes, target); });
        break;
      }
      case FileType::kChar:
      case FileType::kBlock:
      case FileType::kFifo:
      case FileType::kSocket:
        ino = naming(e.path,
                     [&] { return builder_.add_special(parent, e.name, e.attributes, e.type, e.rdev_major, e.rdev_minor); });
        ++counts.specials;
        break;
      default: throw std::invalid_argument(e.path + ": unknown file type");
    }
    if (e.link_identity) seen_.emplace(*e.link_identity, ino);
  }

  std::uint32_t file(SourceDirectory& dir, std::uint32_t parent, const SourceEntry& e) {
    const std::unique_ptr<SourceFile> f = dir.open_file(e);
    const std::vector<ByteRange> ranges = f->data_ranges();
    for (const ByteRange& r : ranges) counts.data_bytes += r.length;
    const std::uint32_t ino = naming(e.path, [&] {
      return builder_.add_file(parent, e.name, e.attributes, e.size, ranges,
                               [&](std::uint64_t offset, std::span<std::uint8_t> buffer) { f->read(offset, buffer); });
    });
    ++counts.files;
    return ino;
  }

  ImageBuilder& builder_;
  std::map<std::pair<std::uint64_t, std::uint64_t>, std::uint32_t> seen_;  // link identity -> image inode
};

}  // namespace

PopulateCounts populate(ImageBuilder& builder, SourceTree& tree) {
  builder.set_root_attributes(tree.root_attributes());
  Walker walker(builder);
  walker.directory(*tree.open_root(), ImageBuilder::kRoot);
  return walker.counts;
}

}  // namespace fscore::ext4
