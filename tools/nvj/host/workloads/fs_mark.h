// SPDX-License-Identifier: BSD-3-Clause
// fs_mark (Ric Wheeler's metadata benchmark) run as a child process: the
// workload of nvj demo and of the wheeler2007 experiment.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

namespace nvj::cli {

struct FsMarkOptions {
  // Where the files go. fs_mark refuses paths of 40 bytes or more, so it
  // runs in the parent folder with the last component as a relative path.
  std::filesystem::path directory;
  std::uint64_t threads = 1;           // all writing into `directory`
  std::uint64_t files_per_thread = 1;
  std::uint64_t file_size = 10240;
  int sync_method = 1;                 // fs_mark -S: 1 = fsync before close
  std::filesystem::path log;           // fs_mark -l (it writes ./fs_log.txt otherwise)
};

struct FsMarkResult {
  std::uint64_t files = 0;             // fs_mark's Count
  double files_per_second = 0;
};

// Runs fs_mark once (-k: the files stay). Throws with fs_mark's output when
// it fails or prints no result.
FsMarkResult run_fs_mark(const FsMarkOptions& options);

// The last result row of fs_mark's output (FSUse% Count Size Files/sec
// App-Overhead); throws if there is none.
FsMarkResult parse_fs_mark(const std::string& output);

}  // namespace nvj::cli
