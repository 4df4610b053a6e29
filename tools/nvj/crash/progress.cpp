// SPDX-License-Identifier: BSD-3-Clause
#include "tools/nvj/crash/progress.h"

#include <unistd.h>

#include <cmath>
#include <cstdio>

namespace nvj::cli {

Progress::Progress(std::uint64_t total, std::string what)
    : total_(total), what_(std::move(what)), terminal_(::isatty(STDERR_FILENO) == 1), last_(Clock::now()) {}

double Progress::elapsed() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }

std::string Progress::time_left(std::uint64_t done, std::uint64_t total, double seconds) {
  if (done == 0 || done >= total || seconds <= 0) return "";
  const double left = seconds * static_cast<double>(total - done) / static_cast<double>(done);
  char text[48];
  if (left < 90)
    std::snprintf(text, sizeof text, "about %.0f s left", std::ceil(left));
  else if (left < 5400)
    std::snprintf(text, sizeof text, "about %.0f min left", std::ceil(left / 60));
  else
    std::snprintf(text, sizeof text, "about %.1f h left", left / 3600);
  return text;
}

void Progress::update(std::uint64_t done, std::uint64_t failing) {
  const auto now = Clock::now();
  const double seconds = elapsed();
  const double rate = seconds > 0 ? static_cast<double>(done) / seconds : 0.0;
  const std::string left = time_left(done, total_, seconds);
  if (terminal_) {
    if (done < total_ && now - last_ < std::chrono::milliseconds(100)) return;
    last_ = now;
    constexpr std::uint64_t kWidth = 30;
    const std::uint64_t filled = total_ == 0 ? kWidth : done * kWidth / total_;
    const std::string bar = std::string(filled, '#') + std::string(kWidth - filled, '.');
    std::fprintf(stderr, "\r[%s] %llu/%llu states  %.0f states/s  %llu failing  %s\033[K", bar.c_str(),
                 static_cast<unsigned long long>(done), static_cast<unsigned long long>(total_), rate,
                 static_cast<unsigned long long>(failing), left.c_str());
    drawn_ = true;
  } else {
    if (now - last_ < std::chrono::seconds(10)) return;
    last_ = now;
    std::fprintf(stderr, "%s: %llu of %llu states (%.0f%%), %.0f states/s, %llu failing%s%s\n", what_.c_str(),
                 static_cast<unsigned long long>(done), static_cast<unsigned long long>(total_),
                 total_ == 0 ? 100.0 : 100.0 * static_cast<double>(done) / static_cast<double>(total_), rate,
                 static_cast<unsigned long long>(failing), left.empty() ? "" : ", ", left.c_str());
  }
  std::fflush(stderr);
}

void Progress::finish() {
  if (terminal_ && drawn_) std::fprintf(stderr, "\r\033[K");
  drawn_ = false;
}

}  // namespace nvj::cli
