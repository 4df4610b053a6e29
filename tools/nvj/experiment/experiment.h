// SPDX-License-Identifier: BSD-3-Clause
// The classic experiments (experiments.md), each end to end on this host:
// servers with the devices the experiment compares, attached and mounted,
// the seed's workload, and what the devices saw, written as results.json,
// table.md and plots into the output folder.
#pragma once

#include <csignal>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace nvj::cli {

struct ExperimentOptions {
  bool quick = false;                 // the short version: minutes, what the tests run
  std::uint32_t passes = 0;           // morton2001: files per process (0: the experiment's own)
  std::vector<std::string> filesystems;  // --fs: ext4, xfs, btrfs (empty: the experiment's own)
  std::filesystem::path out;          // the output folder
  std::filesystem::path run_dir;      // servers, mounts (removed afterwards)
  const volatile std::sig_atomic_t* interrupted = nullptr;  // set by a signal: stop between runs
};

// Runs the experiment, prints its table; returns the exit status.
int morton2001(const ExperimentOptions& options);   // E1: synctest, journal placement
int wheeler2007(const ExperimentOptions& options);  // E2: fs_mark threads, journal latency, batching
int enospc2015(const ExperimentOptions& options);   // E5: out of space
int chinner2012(const ExperimentOptions& options);   // E3: many threads writing large files, ext4 vs XFS
int phillips2014(const ExperimentOptions& options);  // E4: directory packing, seeks per operation

}  // namespace nvj::cli
