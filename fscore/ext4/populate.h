// Copies a host directory tree into an image being built, like mke2fs -d:
// regular files (holes stay holes, found with SEEK_DATA/SEEK_HOLE),
// directories, symlinks, hard links (within the tree), device nodes, FIFOs
// and sockets, with their modes, owners and nanosecond times. Names are
// taken as bytes, whatever their encoding. Extended attributes are not
// copied (yet): they are counted, so the caller can warn.
#pragma once

#include <string>

#include "fscore/ext4/image_builder.h"

namespace fscore::ext4 {

struct PopulateCounts {
  std::uint64_t files = 0, directories = 0, symlinks = 0, hard_links = 0, specials = 0;
  std::uint64_t data_bytes = 0;  // bytes of file data copied (holes not counted)
  std::uint64_t xattrs_not_copied = 0;  // extended attributes (ACLs, capabilities, ...) left behind
};

// The root of the image takes the source directory's mode, owner and times.
// Throws std::system_error naming the path that could not be read,
// NoSpaceError when the tree does not fit, std::invalid_argument for what
// ext4 cannot hold (a symlink target longer than a block).
PopulateCounts populate_from_directory(ImageBuilder& builder, const std::string& source);

}  // namespace fscore::ext4
