// SPDX-License-Identifier: BSD-3-Clause
// Progress while states are checked, on stderr. On a terminal a bar redrawn
// at most ten times a second: "[#####.....] 1234/5000 states  1520 states/s
// 3 failing  about 2 s left". In a log (a batch job's, a pipe) a line every
// 10 s instead: "nvj crash check: 1234 of 5000 states (24%), 1520 states/s,
// 3 failing, about 2 s left". The time left is the states left at the rate
// so far.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace nvj::cli {

class Progress {
 public:
  explicit Progress(std::uint64_t total, std::string what = "nvj crash check");
  void update(std::uint64_t done, std::uint64_t failing);
  // Clears the bar.
  void finish();
  // Seconds since it was made.
  double elapsed() const;
  // "about 12 s left", "about 3 min left", or "" before there is a rate.
  static std::string time_left(std::uint64_t done, std::uint64_t total, double seconds);

 private:
  using Clock = std::chrono::steady_clock;
  std::uint64_t total_;
  std::string what_;
  bool terminal_;
  bool drawn_ = false;
  Clock::time_point start_ = Clock::now();
  Clock::time_point last_{};
};

}  // namespace nvj::cli
