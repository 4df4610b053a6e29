// SPDX-License-Identifier: BSD-3-Clause
// The clock's waits: the spin window WaitWindow learns from how late sleeps
// woke (pure, fed by hand), and MonotonicClock's waits in real time, which
// must never return before their deadline.
#include <catch2/catch.hpp>

#include <vector>

#include "common/clock.h"
#include "common/wait_window.h"

namespace clock_test {

using namespace nvj;

namespace {

void feed(WaitWindow& w, Nanos late, int times) {
  for (int i = 0; i < times; ++i) w.learn(late);
}

}  // namespace

TEST_CASE("a spin window starts at 80 us, or at its floor if that is more", "[clock]") {
  CHECK(WaitWindow(40 * kMicro).window() == 80 * kMicro);
  CHECK(WaitWindow(100 * kMicro).window() == 100 * kMicro);
  WaitWindow w(kMicro);
  feed(w, 5 * kMicro, WaitWindow::kWarmUp - 1);
  CHECK(w.window() == 80 * kMicro);  // not enough sleeps seen yet
  w.learn(5 * kMicro);
  CHECK(w.window() < 80 * kMicro);
}

TEST_CASE("a spin window covers twice the mean lateness and the recent tail", "[clock]") {
  WaitWindow w(kMicro);
  feed(w, 20 * kMicro, 200);
  // The mean converges to 20 us (within the 1/16 step's rounding), so twice
  // it (40 us) beats the tail's 20 + 10 us.
  CHECK(w.window() > 40 * kMicro - 40);
  CHECK(w.window() <= 40 * kMicro);
  // One slow wake-up in 32 moves the mean, not the tail.
  w.learn(kMilli);
  const Nanos after_one = w.window();
  CHECK(after_one > 150 * kMicro);
  CHECK(after_one < 170 * kMicro);  // 2 x (20 + 980 / 16) us
  // Two in the last 32 are the tail: the window covers them, plus 10 us.
  feed(w, 20 * kMicro, 5);
  w.learn(kMilli);
  CHECK(w.window() == kMilli + WaitWindow::kMargin);
  // Once they are 32 sleeps back the tail forgets them and the mean decays.
  feed(w, 20 * kMicro, 100);
  CHECK(w.window() < 45 * kMicro);
}

TEST_CASE("a spin window keeps within its floor and 2 ms", "[clock]") {
  WaitWindow slow(40 * kMicro);
  feed(slow, 5 * kMilli, 40);
  CHECK(slow.window() == WaitWindow::kCeiling);
  WaitWindow quick(40 * kMicro);
  feed(quick, 1 * kMicro, 40);
  CHECK(quick.window() == 40 * kMicro);
  WaitWindow early(kMicro);
  feed(early, -3 * kMicro, 40);  // a wake-up before its time counts as on time
  CHECK(early.window() == WaitWindow::kMargin);
  CHECK(early.samples() == 40);
}

TEST_CASE("waits of 256 us or more are classed by their length", "[clock]") {
  CHECK(MonotonicClock::length_class(MonotonicClock::kSpinBelow) == 0);
  CHECK(MonotonicClock::length_class(kMilli - 1) == 0);
  CHECK(MonotonicClock::length_class(kMilli) == 1);
  CHECK(MonotonicClock::length_class(4 * kMilli - 1) == 1);
  CHECK(MonotonicClock::length_class(4 * kMilli) == 2);
  CHECK(MonotonicClock::length_class(16 * kMilli - 1) == 2);
  CHECK(MonotonicClock::length_class(16 * kMilli) == 3);
  CHECK(MonotonicClock::length_class(10 * kSecond) == 3);
}

TEST_CASE("a real wait never returns before its deadline, and counts what it did", "[clock]") {
  MonotonicClock clock;
  std::vector<Nanos> early;
  for (int i = 0; i < 20; ++i)
    for (const Nanos length : {5 * kMicro, 150 * kMicro, 1500 * kMicro}) {
      const Nanos deadline = clock.now() + length;
      clock.wait_until(deadline);
      const Nanos back = clock.now();
      if (back < deadline) early.push_back(deadline - back);
    }
  CHECK(early.empty());
  MonotonicClock::Stats s = clock.stats();
  // A call whose deadline passed before it came (this thread descheduled
  // between now() and the call, under load) counts as behind, not a wait.
  CHECK(s.waits + s.behind == 60);
  CHECK(s.slept >= 1);   // the first 1.5 ms wait sleeps: no window is that wide yet
  CHECK(s.slept <= 20);  // waits under 256 us spin all the way
  CHECK(s.spun > 0);
  CHECK(s.shared == 0);  // one thread
  CHECK(s.windows[0] == 80 * kMicro);  // no wait from 256 us to 1 ms, so nothing was learned
  CHECK(clock.spin_window(1500 * kMicro) == s.windows[1]);

  const std::uint64_t waits = s.waits, behind = s.behind;
  clock.wait_until(clock.now() - 1);  // already past: returns at once, counted behind
  CHECK(clock.stats().waits == waits);
  CHECK(clock.stats().behind == behind + 1);
  clock.reset_stats();
  s = clock.stats();
  CHECK(s.waits == 0);
  CHECK(s.behind == 0);
  CHECK(s.slept == 0);
  CHECK(s.spun == 0);
  CHECK(clock.spin_window(1500 * kMicro) == s.windows[1]);  // what was learned stays
}

TEST_CASE("a spin window too long to let its waits sleep starts again after 32 of them", "[clock]") {
  WaitWindow w(40 * kMicro);
  feed(w, 200 * kMicro, 40);  // a burst of slow wake-ups
  const Nanos wide = w.window();
  CHECK(wide >= 210 * kMicro);
  // Waits of 100 us now spin all the way, and teach nothing...
  for (int i = 0; i < WaitWindow::kRecent - 1; ++i) w.spun_through(100 * kMicro);
  CHECK(w.window() == wide);
  // ...until the 32nd in a row: the window starts again, and learns anew.
  w.spun_through(100 * kMicro);
  CHECK(w.window() == WaitWindow::kFirst);
  CHECK(w.samples() == 0);
  feed(w, 15 * kMicro, 40);
  CHECK(w.window() == 40 * kMicro);  // twice the mean (30 us) or 25 us: the floor
  // Waits no longer than the floor spin whatever was learned: they count for nothing.
  feed(w, 200 * kMicro, 40);
  for (int i = 0; i < 100; ++i) w.spun_through(30 * kMicro);
  CHECK(w.window() >= 210 * kMicro);
  // A sleep in between starts the count again.
  for (int i = 0; i < WaitWindow::kRecent - 1; ++i) w.spun_through(100 * kMicro);
  w.learn(200 * kMicro);
  w.spun_through(100 * kMicro);
  CHECK(w.window() >= 210 * kMicro);
}

}  // namespace clock_test
