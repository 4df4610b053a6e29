// SPDX-License-Identifier: BSD-3-Clause
// HostTree: a directory of this host as populate's SourceTree
// (fscore/ext4/source_tree.h). Walks with openat/statx relative to open
// directories, never following symlinks; finds holes with SEEK_DATA and
// SEEK_HOLE; counts extended attributes. Errors are std::system_error
// naming the path that could not be read.
#pragma once

#include <memory>
#include <string>

#include "fscore/ext4/source_tree.h"

namespace nvj {

class HostTree final : public fscore::ext4::SourceTree {
 public:
  explicit HostTree(std::string root);  // throws unless `root` is a readable directory
  ~HostTree() override;
  HostTree(const HostTree&) = delete;
  HostTree& operator=(const HostTree&) = delete;

  fscore::ext4::Attributes root_attributes() override;
  std::unique_ptr<fscore::ext4::SourceDirectory> open_root() override;

 private:
  std::string root_;
  int fd_;
};

}  // namespace nvj
