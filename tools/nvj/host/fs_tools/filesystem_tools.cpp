// SPDX-License-Identifier: BSD-3-Clause
#include "tools/nvj/host/fs_tools/filesystem_tools.h"

#include <stdexcept>
#include <string_view>

#include "tools/nvj/host/processes/process.h"

namespace nvj::cli {

std::string mount_data(const std::string& filesystem, const std::string& options, const std::string& log) {
  if (log.empty() || filesystem == "btrfs") return options;
  return options + (options.empty() ? "" : ",") + (filesystem == "xfs" ? "logdev=" : "journal_path=") + log;
}

std::string copy_mount_options(const std::string& filesystem, const std::string& options) {
  if (filesystem != "xfs") return options;
  return options + (options.empty() ? "" : ",") + "nouuid";
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

namespace {

// Calls `visit` with each line of `text`, without its newline, until it
// returns false.
template <typename Visit>
void each_line(const std::string& text, Visit&& visit) {
  for (std::size_t at = 0; at < text.size();) {
    std::size_t end = text.find('\n', at);
    if (end == std::string::npos) end = text.size();
    if (!visit(std::string_view(text.data() + at, end - at))) return;
    at = end + 1;
  }
}

}  // namespace

std::string checker_findings(const std::string& output, std::size_t lines) {
  static constexpr std::string_view kNoise[] = {"e2fsck 1.", "Pass ", "Phase ", "        - ", "Opening filesystem", "Checking ",
                                                "Superblock hint for external superblock should be "};
  std::string out;
  std::size_t taken = 0;
  if (lines == 0) return out;
  each_line(output, [&](std::string_view line) {
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.remove_suffix(1);
    if (line.empty()) return true;
    bool noise = false;
    for (const std::string_view n : kNoise) noise = noise || line.substr(0, n.size()) == n;
    // e2fsck's summary: "DEVICE: 13/65536 files (0.0% non-contiguous), ...",
    // and what it says at the end of a check that found something.
    noise = noise || line.find(" files (") != std::string_view::npos ||
            line.find("WARNING: Filesystem still has errors") != std::string_view::npos;
    if (noise) return true;
    out += (out.empty() ? "" : "; ") + std::string(line);
    return ++taken < lines;
  });
  return out;
}

bool checker_finds_damage(int status, const std::string& output) {
  if (status == 0) return false;
  if (status != 4) return true;  // 4: errors left uncorrected (-n); anything else is more
  return !checker_findings(output, 1).empty();
}

std::string repair_findings(const std::string& output, std::size_t lines) {
  static constexpr std::string_view kExpected[] = {"Clearing orphaned inode ", "Truncating orphaned inode ",
                                                   "Free blocks count wrong (", "Free inodes count wrong ("};
  std::string kept;
  bool prompt_of_dropped = false;  // "Fix? yes" on the line after a dropped finding goes with it
  each_line(output, [&](std::string_view line) {
    const bool prompt = line.ends_with("? yes") && line.find(' ') == line.rfind(' ');
    if (prompt && prompt_of_dropped) return true;
    bool expected = line.find("***** FILE SYSTEM WAS MODIFIED *****") != std::string_view::npos;
    for (const std::string_view e : kExpected) expected = expected || line.starts_with(e);
    prompt_of_dropped = expected || (prompt_of_dropped && line.empty());
    if (!expected) kept += std::string(line) + "\n";
    return true;
  });
  return checker_findings(kept, lines);
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
