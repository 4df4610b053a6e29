#include "common/clock.h"

#include <sys/prctl.h>
#include <time.h>

#include <algorithm>
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

Nanos MonotonicClock::now() const {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<Nanos>(ts.tv_sec) * kSecond + ts.tv_nsec;
}

Nanos MonotonicClock::spin_window() const {
  return std::clamp<Nanos>(2 * overshoot_.load(std::memory_order_relaxed), min_window_, 2 * kMilli);
}

void MonotonicClock::wait_until(Nanos deadline) {
  const Nanos window = spin_window();
  if (deadline - now() > window) {
    const Nanos target = deadline - window;
    sleep_until(target);
    // Learn how late sleeps wake: an average over the last 16 or so.
    const Nanos late = now() - target;
    const Nanos old = overshoot_.load(std::memory_order_relaxed);
    overshoot_.store(old + (late - old) / 16, std::memory_order_relaxed);
  }
  if (now() >= deadline) return;
  int idle = 0;
  if (!spinning_.compare_exchange_strong(idle, 1)) {  // someone else holds the core
    sleep_until(deadline);
    return;
  }
  while (now() < deadline) {
#if defined(__x86_64__)
    __builtin_ia32_pause();
#endif
  }
  spinning_.store(0);
}

}  // namespace nvj
