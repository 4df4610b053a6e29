#include "server/model/clock.h"

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

Nanos MonotonicClock::now() const {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<Nanos>(ts.tv_sec) * kSecond + ts.tv_nsec;
}

void MonotonicClock::wait_until(Nanos deadline) {
  if (deadline - now() > spin_window_) sleep_until(deadline - spin_window_);
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
