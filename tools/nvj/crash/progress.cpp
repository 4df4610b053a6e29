#include "tools/nvj/crash/progress.h"

#include <unistd.h>

#include <cstdio>
#include <string>

namespace nvj::cli {

Progress::Progress(std::uint64_t total) : total_(total), draw_(::isatty(STDERR_FILENO) == 1) {}

double Progress::elapsed() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }

void Progress::update(std::uint64_t done, std::uint64_t failing) {
  if (!draw_) return;
  const auto now = Clock::now();
  if (done < total_ && now - last_ < std::chrono::milliseconds(100)) return;
  last_ = now;
  constexpr std::uint64_t kWidth = 30;
  const std::uint64_t filled = total_ == 0 ? kWidth : done * kWidth / total_;
  const std::string bar = std::string(filled, '#') + std::string(kWidth - filled, '.');
  const double seconds = elapsed();
  std::fprintf(stderr, "\r[%s] %llu/%llu states  %.0f states/s  %llu failing ", bar.c_str(),
               static_cast<unsigned long long>(done), static_cast<unsigned long long>(total_),
               seconds > 0 ? static_cast<double>(done) / seconds : 0.0, static_cast<unsigned long long>(failing));
  std::fflush(stderr);
}

void Progress::finish() {
  if (draw_) std::fprintf(stderr, "\r\033[K");
}

}  // namespace nvj::cli
