// SPDX-License-Identifier: BSD-3-Clause
// What the experiments that watch one disk (chinner2012, phillips2014)
// share: a server with the data export alone on the disk model, its write
// cache off so that every write's placement shows as the arm's movement,
// the filesystem's journal or log inside; the disk's counters for a phase
// (GET /stats after POST /reset-stats); a cold cache; a timed command.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "common/json.h"
#include "tools/nvj/testbed/testbed.h"

namespace nvj::cli {

// The data export's counters since the last reset.
struct DiskCounts {
  std::uint64_t reads = 0, read_bytes = 0, writes = 0, write_bytes = 0;
  double sequential = 0;  // the sequential fraction
  std::uint64_t seeks = 0, seek_cylinders = 0;
  std::map<std::uint64_t, std::uint64_t> seek_distance;  // up to a power of two -> seeks
  double device_ms = 0;  // seek, rotation, transfer, and destaging the drive's cache
  double mean_seek() const { return seeks ? static_cast<double>(seek_cylinders) / static_cast<double>(seeks) : 0; }
};

// A server on `run_dir` with a `size` disk model (hdd, cache off) and
// `filesystem` on it: ext4 with its journal inside, XFS with its log
// inside, or btrfs (both made on the blank data export).
TestbedOptions one_disk(const std::filesystem::path& run_dir, const std::string& size, const std::string& filesystem);

DiskCounts disk_counts(const Testbed& lab);

// {"64": 3, ...}: seeks by distance, as results.json has them.
Json seek_distance_json(const std::map<std::uint64_t, std::uint64_t>& distance);

// Unmounted, this host's caches dropped, the loop device's buffers flushed,
// mounted again: what follows reads from the disk.
void cold_cache(Testbed& lab);

// Runs `argv` (it must succeed); its wall time in seconds.
double timed(const std::vector<std::string>& argv);

}  // namespace nvj::cli
