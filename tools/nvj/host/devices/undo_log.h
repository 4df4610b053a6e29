// SPDX-License-Identifier: BSD-3-Clause
// UndoLog: what `nvj attach` created, one step per line, written (and synced)
// as each step succeeds, so `nvj detach` can undo exactly that, in reverse,
// even after a failed or interrupted attach.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace nvj::cli {

struct UndoStep {
  std::string kind;               // "dir", "fuse", "loop", "nbd"
  std::vector<std::string> args;  // kind-specific: paths, export name, pid
};

class UndoLog {
 public:
  explicit UndoLog(std::filesystem::path file) : file_(std::move(file)) {}

  void append(const UndoStep& step);
  std::vector<UndoStep> read() const;
  // Replaces the log with `steps` (what is left to undo); removes it if empty.
  void rewrite(const std::vector<UndoStep>& steps);
  bool exists() const { return std::filesystem::exists(file_); }
  const std::filesystem::path& file() const { return file_; }

 private:
  std::filesystem::path file_;
};

}  // namespace nvj::cli
