// SPDX-License-Identifier: BSD-3-Clause
// WaitWindow: how long before a deadline a waiting thread should stop
// sleeping and start to spin, learned from how late its sleeps have woken.
// Pure (no clock): MonotonicClock feeds it one figure per sleep and keeps one
// per class of wait length, since longer sleeps wake later (docs/timing.md).
//
// The window is the larger of twice the mean lateness (a moving average over
// about the last 16 sleeps) and the 31st of the last 32 sleeps' lateness
// (about their 97th percentile) plus 10 us, within [floor, 2 ms]. The mean
// alone follows a heavy tail too far (one wake-up of a millisecond doubles
// the spin for the next few dozen waits) and ignores a tail that is long but
// rare; the order statistic alone lets through the bursts a mean still
// remembers. Until 8 sleeps have been seen the window is 80 us or the floor,
// whichever is more.
//
// A window at least as long as the waits it serves lets none of them sleep,
// so it would learn nothing more and stay that long for good, after one
// burst of slow wake-ups. So 32 waits in a row that spun all the way though
// the floor would have let them sleep make it forget: it starts again from
// 80 us, and learns anew from the next sleeps.
//
// Safe to share between threads: every figure is a relaxed atomic, and two
// threads learning at once may each drop the other's sample, nothing worse.
#pragma once

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>

#include "common/duration.h"

namespace nvj {

class WaitWindow {
 public:
  static constexpr int kRecent = 32;
  static constexpr int kWarmUp = 8;
  static constexpr Nanos kMargin = 10 * kMicro;
  static constexpr Nanos kCeiling = 2 * kMilli;
  static constexpr Nanos kFirst = 80 * kMicro;

  explicit WaitWindow(Nanos floor) : floor_(floor), window_(std::max(floor, kFirst)) {}

  // A sleep woke `late` ns after the time it was asked to wake.
  void learn(Nanos late);
  // A wait of `length` ns spun all the way, its window being at least that
  // long.
  void spun_through(Nanos length);
  Nanos window() const { return window_.load(std::memory_order_relaxed); }
  std::uint64_t samples() const { return seen_.load(std::memory_order_relaxed); }

 private:
  const Nanos floor_;
  std::atomic<Nanos> mean_{0};
  std::array<std::atomic<Nanos>, kRecent> recent_{};
  std::atomic<std::uint64_t> seen_{0};
  std::atomic<std::uint32_t> spun_in_a_row_{0};
  std::atomic<Nanos> window_;
};

}  // namespace nvj
