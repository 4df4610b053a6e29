// SPDX-License-Identifier: BSD-3-Clause
// Copies a tree of files into an image being built, like mke2fs -d:
// regular files (holes stay holes), directories, symlinks, hard links
// (within the tree), device nodes, FIFOs and sockets, with their modes,
// owners and nanosecond times. Names are taken as bytes, whatever their
// encoding. Extended attributes are not copied (yet): they are counted, so
// the caller can warn. The tree comes through SourceTree (source_tree.h):
// fscore never reads the host's files itself.
#pragma once

#include <cstdint>

#include "fscore/ext4/image_builder.h"
#include "fscore/ext4/source_tree.h"

namespace fscore::ext4 {

struct PopulateCounts {
  std::uint64_t files = 0, directories = 0, symlinks = 0, hard_links = 0, specials = 0;
  std::uint64_t data_bytes = 0;  // bytes of file data copied (holes not counted)
  std::uint64_t xattrs_not_copied = 0;  // extended attributes (ACLs, capabilities, ...) left behind
};

// The root of the image takes the tree's root attributes. Entries are added
// in name order, so the same tree gives the same image. Throws what the tree
// throws, NoSpaceError (naming the path) when the tree does not fit,
// std::invalid_argument for what ext4 cannot hold (a symlink target longer
// than a block, an entry of unknown type).
PopulateCounts populate(ImageBuilder& builder, SourceTree& tree);

}  // namespace fscore::ext4
