// SPDX-License-Identifier: BSD-3-Clause
// Run folders: /run/nvjournal/KIND-PID, where a long nvj command (nvj crash
// run, check, record) keeps what it makes while it runs: a server's socket,
// pid file and log, the attach undo log, the mount point, and the name of
// any scratch folder it made elsewhere (for its loop devices' files). The
// command removes it at its end; its first line, "PID STARTTIME", says whose
// it is, so that a PID the kernel has given to another process since is
// not taken for its owner.
//
// A command killed (SIGKILL, a crash) leaves its folder behind. The next one
// clears it (clear_stale_runs): the processes still working in its mount
// point killed, the mount unmounted, its exports detached by the undo log,
// its server stopped (by its pid file, if that process is nbdkit), the loop
// devices bound to files in its scratch folders detached, the folders
// removed; and says what it cleared.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace nvj::cli {

inline const std::filesystem::path kRunRoot = "/run/nvjournal";

class RunFolder {
 public:
  // Clears stale runs of `kind`, then makes kRunRoot/KIND-PID.
  explicit RunFolder(const std::string& kind);
  ~RunFolder();  // removes it, unless keep()
  RunFolder(const RunFolder&) = delete;
  RunFolder& operator=(const RunFolder&) = delete;

  const std::filesystem::path& path() const { return path_; }
  void keep() { keep_ = true; }
  // A folder elsewhere that this run fills and removes itself: if the run
  // dies, the next one detaches the loop devices over its files and removes
  // it.
  void note_scratch(const std::filesystem::path& scratch) const;

 private:
  std::filesystem::path path_;
  bool keep_ = false;
};

// Clears every folder under `root` named KIND-PID whose owner is gone, and
// returns one line per folder cleared, saying what was left there. A folder
// whose owner lives (or that names none) is left alone, and so is one whose
// owner file another process holds locked (flock): another nvj clearing it.
std::vector<std::string> clear_stale_runs(const std::string& kind, const std::filesystem::path& root = kRunRoot);

}  // namespace nvj::cli
