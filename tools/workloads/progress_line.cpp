// SPDX-License-Identifier: BSD-3-Clause
#include "tools/workloads/progress_line.h"

#include <unistd.h>

namespace nvj::workloads {

ProgressLine::ProgressLine(std::FILE* out, std::string unit)
    : out_(out), unit_(std::move(unit)), tty_(::isatty(::fileno(out)) != 0), start_(std::chrono::steady_clock::now()) {}

void ProgressLine::update(std::uint64_t done, std::uint64_t total) {
  if (!tty_ || total == 0) return;
  const auto now = std::chrono::steady_clock::now();
  if (drawn_ && done < total && now - last_ < std::chrono::milliseconds(100)) return;
  last_ = now;
  constexpr int kWidth = 30;
  const int filled = static_cast<int>(kWidth * done / total);
  std::string bar(static_cast<std::size_t>(filled), '#');
  bar.append(static_cast<std::size_t>(kWidth - filled), '.');
  std::fprintf(out_, "\r[%s] %3d%%  %llu/%llu %s  %.1f s\033[K", bar.c_str(), static_cast<int>(100 * done / total),
               static_cast<unsigned long long>(done), static_cast<unsigned long long>(total), unit_.c_str(),
               std::chrono::duration<double>(now - start_).count());
  std::fflush(out_);
  drawn_ = true;
}

void ProgressLine::finish() {
  if (!drawn_) return;
  std::fprintf(out_, "\r\033[K");
  std::fflush(out_);
  drawn_ = false;
}

}  // namespace nvj::workloads
