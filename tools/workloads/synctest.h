// SPDX-License-Identifier: BSD-3-Clause
// synctest: the mail transfer agent simulator of Morton's ext3 tests
// (experiments.md, E1), written from its description. P processes, spread
// over D directories (P/D per directory); each, for `passes` different
// names: creates a file, writes 5 KiB .. 250 KiB to it (exponentially
// distributed), optionally fsyncs it, closes it, optionally fsyncs the
// directory, renames it three times (optionally fsyncing the directory
// after each), and unlinks the file it created `unlink_lag` passes before.
// Seeded: the same options give the same sizes and names.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "tools/workloads/latency_summary.h"
#include "tools/workloads/task_group.h"

namespace nvj::workloads {

struct SynctestOptions {
  std::string directory;            // the tree; created if missing
  std::uint32_t processes = 100;
  std::uint32_t per_directory = 1;  // processes per directory
  std::uint32_t passes = 100;       // names per process
  std::uint64_t min_size = 5 * 1024;
  std::uint64_t max_size = 250 * 1024;
  std::uint64_t mean_size = 30 * 1024;  // mean of the drawn sizes before the cut at max_size
  bool fsync_file = false;
  bool fsync_directory = false;
  bool sync_tree = false;  // chattr +S on the directories (synchronous semantics)
  std::uint32_t unlink_lag = 30;
  std::uint64_t seed = 1;
  // With a server's control socket: the facts of every file as marks
  // (fact_poster.h): its size and content once durable (after its fsync,
  // or its write in a synchronous tree), its entry once its directory is
  // durable (after the directory's fsync, or at once in a synchronous
  // tree), each rename and each unlink before it happens. Paths from
  // `fact_root` (default: FactPoster::default_root()).
  std::string control;
  std::string fact_root;

  std::uint32_t directories() const { return (processes + per_directory - 1) / per_directory; }
};

struct SynctestResult {
  double seconds = 0;
  std::uint64_t files = 0;       // created and written
  std::uint64_t operations = 0;  // creates, writes, fsyncs, renames and unlinks
  std::uint64_t bytes = 0;
  LatencySummary fsync_file, fsync_directory;
  std::optional<TaskFailure> failure;

  double files_per_second() const { return seconds > 0 ? static_cast<double>(files) / seconds : 0; }
  double operations_per_second() const { return seconds > 0 ? static_cast<double>(operations) / seconds : 0; }
  Json json() const;
};

// chattr +S: synchronous semantics for the folder and what is made in it
// (on ext4 every operation in it is a synchronous journal handle). Throws
// std::system_error naming the folder.
void set_sync_flag(const std::string& directory);

// The sizes of process `process`'s files, pass by pass (what the run writes).
std::vector<std::uint64_t> synctest_file_sizes(const SynctestOptions& o, std::uint32_t process);

// Throws std::invalid_argument naming a bad option, std::system_error when
// the tree cannot be made. `on_progress(passes done, passes in all)`.
SynctestResult run_synctest(const SynctestOptions& o,
                            const std::function<void(std::uint64_t, std::uint64_t)>& on_progress = {});

}  // namespace nvj::workloads
