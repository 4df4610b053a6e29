// SPDX-License-Identifier: BSD-3-Clause
// writers: the parallel writer of the Tux3 out-of-space tests
// (experiments.md, E5, "blurt"): N tasks, each in its own process, each
// creating its own file and writing it in K chunks of 1 KiB, optionally
// fsyncing; the first error ends the run, naming the task and the errno.
// Rounds rewrite the same files. Every chunk holds a pattern of (task,
// chunk, round), and each task reports how many chunks were acknowledged
// (written, and fsynced when asked), so a check after a remount can tell
// whether an acknowledged write was lost (verify_writers).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "tools/workloads/task_group.h"

namespace nvj::workloads {

enum class WritersSync { none, each, end };  // fsync after no chunk, every chunk, the last chunk

struct WritersOptions {
  std::string directory;  // created if missing; the files are dK/tI
  std::uint32_t tasks = 1000;
  std::uint32_t chunks = 40;
  std::uint32_t chunk_size = 1024;
  std::uint32_t directories = 9;
  std::uint32_t rounds = 1;
  // Every round writes over the blocks an existing file has (no
  // truncation): what an fsync of a rewrite of allocated blocks must make
  // durable.
  bool overwrite = false;
  WritersSync sync = WritersSync::none;
  // With a server's control socket: each file's facts as marks
  // (fact_poster.h): what it starts with (prefix) after every fsync, its
  // whole content after the last chunk's, a rewrite before a later round
  // truncates or overwrites it. Paths from `fact_root` (default:
  // FactPoster::default_root()).
  std::string control;
  std::string fact_root;
};

struct WritersResult {
  double seconds = 0;
  std::uint32_t rounds_done = 0;  // complete rounds
  std::uint64_t bytes = 0;        // written and acknowledged, all rounds
  double fill = 0;                // used / total blocks of the filesystem at the end
  std::optional<TaskFailure> failure;
  // Per task, what must still be there: the chunks of which round were
  // acknowledged (none: the task never created its file).
  struct Ledger {
    bool exists = false;
    std::uint32_t round = 0;
    std::uint32_t chunks = 0;
  };
  std::vector<Ledger> ledger;
  // failure_errno only with a failure: its errno's name, null when the task
  // ended without one (killed, stopped by a signal).
  Json json() const;
};

// Blocks in use over all blocks of the filesystem holding `path`, as df
// counts them (root may use the reserve, so a full volume reaches 1); 0 if
// it cannot be read. WritersResult::fill.
double filesystem_fill(const std::string& path);

// Throws std::invalid_argument naming a bad option.
WritersResult run_writers(const WritersOptions& o,
                          const std::function<void(std::uint64_t, std::uint64_t)>& on_progress = {});

// The path of task i's file and the pattern of one of its chunks.
std::string writers_file(const WritersOptions& o, std::uint32_t task);
void writers_chunk(std::uint32_t task, std::uint32_t chunk, std::uint32_t round, std::vector<unsigned char>& out);

struct WritersLoss {
  std::uint32_t task;
  std::string detail;  // "t17: chunk 12 differs" / "t17: 8192 bytes, 12288 acknowledged"
};
// Compares the files with what a run acknowledged: every acknowledged chunk
// must read back as written.
std::vector<WritersLoss> verify_writers(const WritersOptions& o, const std::vector<WritersResult::Ledger>& ledger);

// What a run with these options that completed leaves behind: every task's
// file with all its chunks of the last round. With verify_writers, the check
// after a crash that followed a completed run (nvj writers --verify).
// Throws std::invalid_argument naming a bad option, as run_writers does.
std::vector<WritersResult::Ledger> completed_writers_ledger(const WritersOptions& o);

}  // namespace nvj::workloads
