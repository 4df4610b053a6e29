// SPDX-License-Identifier: BSD-3-Clause
// ProgressLine: a one-line progress bar on a terminal, redrawn at most ten
// times a second ("[#######.....]  57%  1140/2000 passes  12.3 s"); on
// anything else (a file, a pipe) it prints nothing.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>

namespace nvj::workloads {

class ProgressLine {
 public:
  ProgressLine(std::FILE* out, std::string unit);
  ~ProgressLine() { finish(); }
  void update(std::uint64_t done, std::uint64_t total);
  void finish();  // clears the line

 private:
  std::FILE* out_;
  std::string unit_;
  bool tty_;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point start_, last_;
};

}  // namespace nvj::workloads
