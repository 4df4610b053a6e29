#include "tools/nvj/host/filesystem_tools.h"

#include <stdexcept>

namespace nvj::cli {

bool known_filesystem(const std::string& filesystem) {
  return filesystem == "ext4" || filesystem == "xfs" || filesystem == "btrfs";
}

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

}  // namespace nvj::cli
