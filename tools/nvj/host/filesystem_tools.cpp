// SPDX-License-Identifier: BSD-3-Clause
#include "tools/nvj/host/filesystem_tools.h"

#include <stdexcept>

#include "tools/nvj/host/process.h"

namespace nvj::cli {

std::string mount_data(const std::string& filesystem, const std::string& options, const std::string& log) {
  if (log.empty() || filesystem == "btrfs") return options;
  return options + (options.empty() ? "" : ",") + (filesystem == "xfs" ? "logdev=" : "journal_path=") + log;
}

std::vector<std::string> fsck_command(const std::string& filesystem, const std::string& data, const std::string& log) {
  std::vector<std::string> argv;
  if (filesystem == "ext4") {
    argv = {"e2fsck", "-fn"};
    if (!log.empty()) argv.insert(argv.end(), {"-j", log});
  } else if (filesystem == "xfs") {
    argv = {"xfs_repair", "-n"};
    if (!log.empty()) argv.insert(argv.end(), {"-l", log});
  } else if (filesystem == "btrfs") {
    argv = {"btrfs", "check", "--readonly"};
  } else {
    throw std::invalid_argument("no such filesystem: " + filesystem + " (ext4, xfs, btrfs)");
  }
  argv.push_back(data);
  return argv;
}

std::vector<std::string> repair_command(const std::string& filesystem, const std::string& data, const std::string& log) {
  std::vector<std::string> argv = fsck_command(filesystem, data, log);
  if (filesystem == "ext4") argv[1] = "-fy";
  else if (filesystem == "xfs") argv.erase(argv.begin() + 1);
  return argv;
}

void make_filesystem(const std::string& filesystem, const std::string& data, const std::string& log,
                     const std::vector<std::string>& options) {
  std::vector<std::string> argv;
  if (filesystem == "xfs") {
    argv = {"mkfs.xfs", "-q"};
    if (!log.empty()) argv.insert(argv.end(), {"-l", "logdev=" + log});
    argv.push_back(data);
  } else if (filesystem == "btrfs") {
    argv = {"mkfs.btrfs", "-q", data};
  } else {
    throw std::invalid_argument("mkfs of " + filesystem + ": xfs or btrfs (the server builds ext4)");
  }
  argv.insert(argv.end() - 1, options.begin(), options.end());
  const RunResult made = run(argv);
  if (made.status != 0)
    throw std::runtime_error(quote(argv) + " failed (status " + std::to_string(made.status) + "): " + made.output);
  for (const std::string& device : {data, log}) {
    if (device.empty()) continue;
    const RunResult flushed = run({"blockdev", "--flushbufs", device});
    if (flushed.status != 0) throw std::runtime_error("blockdev --flushbufs " + device + ": " + flushed.output);
  }
}

}  // namespace nvj::cli
