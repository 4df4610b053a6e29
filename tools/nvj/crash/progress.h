// A progress bar on stderr while states are checked, redrawn at most ten
// times a second: "[#####.....] 1234/5000 states  1520 states/s  3 failing".
// Drawn only when stderr is a terminal; in a log (a batch job's) nothing.
#pragma once

#include <chrono>
#include <cstdint>

namespace nvj::cli {

class Progress {
 public:
  explicit Progress(std::uint64_t total);
  void update(std::uint64_t done, std::uint64_t failing);
  // Clears the bar.
  void finish();
  // Seconds since it was made.
  double elapsed() const;

 private:
  using Clock = std::chrono::steady_clock;
  std::uint64_t total_;
  bool draw_;
  Clock::time_point start_ = Clock::now();
  Clock::time_point last_{};
};

}  // namespace nvj::cli
