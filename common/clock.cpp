// SPDX-License-Identifier: BSD-3-Clause
#include "common/clock.h"

#include <sys/prctl.h>
#include <time.h>

#include <cerrno>

namespace nvj {
namespace {

void sleep_until(Nanos deadline) {
  // Each nbdkit worker asks once for the finest timer slack.
  static thread_local const bool slack = ::prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL) == 0;
  (void)slack;
  timespec ts{static_cast<time_t>(deadline / kSecond), static_cast<long>(deadline % kSecond)};
  while (::clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr) == EINTR) {
  }
}

}  // namespace

MonotonicClock::MonotonicClock(Nanos min_window)
    : windows_{WaitWindow(min_window), WaitWindow(min_window), WaitWindow(min_window), WaitWindow(min_window)} {}

Nanos MonotonicClock::now() const {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<Nanos>(ts.tv_sec) * kSecond + ts.tv_nsec;
}

int MonotonicClock::length_class(Nanos length) {
  int k = 0;
  for (Nanos bound = kMilli; k + 1 < kLengthClasses && length >= bound; bound *= 4) ++k;
  return k;
}

Nanos MonotonicClock::spin_window(Nanos length) const {
  return windows_[static_cast<std::size_t>(length_class(length))].window();
}

void MonotonicClock::wait_until(Nanos deadline) {
  const Nanos start = now();
  if (start >= deadline) {
    behind_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  waits_.fetch_add(1, std::memory_order_relaxed);
  if (deadline - start < kSpinBelow) {
    spin_or_sleep(deadline);
    return;
  }
  WaitWindow& learned = windows_[static_cast<std::size_t>(length_class(deadline - start))];
  const Nanos window = learned.window();
  if (deadline - start > window) {
    const Nanos target = deadline - window;
    sleep_until(target);
    const Nanos woke = now();
    learned.learn(woke - target);
    slept_.fetch_add(1, std::memory_order_relaxed);
    if (woke >= deadline) {
      woke_late_.fetch_add(1, std::memory_order_relaxed);
      return;
    }
  } else {
    learned.spun_through(deadline - start);
  }
  spin_or_sleep(deadline);
}

void MonotonicClock::spin_or_sleep(Nanos deadline) {
  int idle = 0;
  if (!spinning_.compare_exchange_strong(idle, 1)) {  // someone else holds the core
    shared_.fetch_add(1, std::memory_order_relaxed);
    sleep_until(deadline);
    return;
  }
  spin_until(deadline);
  spinning_.store(0);
}

void MonotonicClock::spin_until(Nanos deadline) {
  const Nanos from = now();
  Nanos t = from;
  while (t < deadline) {
#if defined(__x86_64__)
    __builtin_ia32_pause();
#endif
    t = now();
  }
  spun_.fetch_add(t - from, std::memory_order_relaxed);
}

MonotonicClock::Stats MonotonicClock::stats() const {
  Stats s;
  s.waits = waits_.load(std::memory_order_relaxed);
  s.slept = slept_.load(std::memory_order_relaxed);
  s.woke_late = woke_late_.load(std::memory_order_relaxed);
  s.behind = behind_.load(std::memory_order_relaxed);
  s.shared = shared_.load(std::memory_order_relaxed);
  s.spun = spun_.load(std::memory_order_relaxed);
  for (std::size_t i = 0; i < windows_.size(); ++i) s.windows[i] = windows_[i].window();
  return s;
}

void MonotonicClock::reset_stats() {
  for (auto* c : {&waits_, &slept_, &woke_late_, &shared_, &behind_}) c->store(0, std::memory_order_relaxed);
  spun_.store(0, std::memory_order_relaxed);
}

}  // namespace nvj
