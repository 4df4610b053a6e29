// SPDX-License-Identifier: BSD-3-Clause
// The filesystem a server starts with, so that no client has to run mkfs:
// format new stores as ext4 with an internal or
// external journal, optionally populated from a host directory; serve an
// existing ext4 as it is, finding its journal; refuse to overwrite anything
// else unless forced. nvj mkfs uses the same code on image files.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "fscore/ext4/block_map.h"
#include "fscore/ext4/image_builder.h"
#include "fscore/ext4/populate.h"
#include "fscore/uuid.h"
#include "server/store/store.h"

namespace nvj {

enum class JournalPlacement { external, internal, none };

struct FilesystemSpec {
  bool format = true;                          // fs=ext4; false: fs=none, blank disks
  JournalPlacement journal = JournalPlacement::external;
  std::optional<std::uint64_t> internal_journal_bytes;  // internal:SIZE; else mke2fs's size
  std::optional<std::string> populate;         // a host directory, absolute
  bool force = false;                          // format over data that is not ext4
  std::uint32_t block_size = 0;                // 0: like mke2fs
  // The largest logical sector of the exports it goes on: with block_size 0,
  // blocks are at least this big (as mke2fs does on such a disk).
  std::uint32_t sector_size = 512;
  std::string label;
  std::optional<fscore::Uuid> uuid;            // else random
  // fs-free=old-data: the new filesystem's free blocks hold old data
  // (fscore/record/old_data.h), as a disk used before would; else zeroes.
  bool free_old_data = false;
};

// Raised when a store holds data that is not an ext4 filesystem (and not
// forced), or an ext4 that does not fit the configuration. Nothing is
// written then.
class FilesystemError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct FilesystemState {
  enum class Origin { formatted, existing, blank };
  Origin origin = Origin::blank;
  JournalPlacement journal = JournalPlacement::none;
  std::uint32_t block_size = 0;
  std::uint64_t blocks = 0;
  fscore::Uuid uuid{};
  std::string label;
  // The internal journal's byte ranges on the data store, in log order.
  std::vector<std::pair<std::uint64_t, std::uint64_t>> journal_region;
  fscore::ext4::PopulateCounts populated;
  std::uint64_t bytes_written = 0;  // by formatting
  std::uint64_t old_data_bytes = 0;  // of the free blocks, written with old data (fs-free=old-data)

  std::string describe() const;  // "ext4, 4 KiB blocks, internal journal of 64 MiB (formatted)"
};

// `journal` is the journal export's store (nullptr without one). Throws
// FilesystemError, fscore::ext4::NoSpaceError (a tree that does not fit),
// std::invalid_argument (a bad size or block size) or std::system_error
// (a populate directory that cannot be read); in every case before anything
// is written.
FilesystemState prepare_filesystem(const FilesystemSpec& spec, Store& data, Store* journal);

// Reads what an existing ext4 store holds (FilesystemError if it is not a
// filesystem this server can serve with `journal`).
FilesystemState read_filesystem(Store& data, Store* journal);

}  // namespace nvj
