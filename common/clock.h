// SPDX-License-Identifier: BSD-3-Clause
// Clock: the device's time, and waiting for it. The seam between the models
// (virtual time) and the server (real time), like LevelDB's Env: tests use
// ManualClock and never sleep.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>

#include "common/duration.h"
#include "common/wait_window.h"

namespace nvj {

class Clock {
 public:
  virtual ~Clock() = default;
  virtual Nanos now() const = 0;
  // Returns no earlier than `deadline`.
  virtual void wait_until(Nanos deadline) = 0;
};

// CLOCK_MONOTONIC. A wait shorter than 256 us spins all the way: a sleep,
// however well timed, leaves the reply 2 to 4 us later at p50 end to end on
// this kind of machine (bench/RESULTS.md, nvram_accuracy), more than the
// 2 us a model's time may be off. A longer wait sleeps (timer slack 1 ns)
// until a spin window before the deadline, then spins for the rest: sleeping
// alone wakes tens of microseconds late, later after longer sleeps
// (docs/timing.md). The window is learned (common/wait_window.h) from how
// late this clock's sleeps woke, separately for waits of different lengths:
// under 1 ms, 4 ms, 16 ms, and longer. It is at least `min_window` (80 us)
// and at most 2 ms. One thread spins at a time: with two cores and sixteen
// requests in flight, every waiter spinning would starve the rest; a waiter
// that finds the spinner busy sleeps the last stretch too.
class MonotonicClock final : public Clock {
 public:
  static constexpr Nanos kSpinBelow = 256 * kMicro;
  static constexpr int kLengthClasses = 4;

  explicit MonotonicClock(Nanos min_window = 80 * kMicro);
  Nanos now() const override;
  void wait_until(Nanos deadline) override;
  // The spin window for a wait of `length` ns (kSpinBelow or more).
  Nanos spin_window(Nanos length) const;
  // The class of a wait of kSpinBelow or more: 0 under 1 ms, 1 under 4 ms,
  // 2 under 16 ms, 3 for longer.
  static int length_class(Nanos length);

  // What the waits did, since the clock was made.
  struct Stats {
    std::uint64_t waits = 0;       // calls that had to wait (deadline still ahead)
    std::uint64_t slept = 0;       // of those, the ones that slept first (none under kSpinBelow)
    std::uint64_t woke_late = 0;   // slept past the deadline: the window was too short
    // Calls whose deadline had passed before they came: they return at once,
    // late (the caller fell behind its deadlines).
    std::uint64_t behind = 0;
    std::uint64_t shared = 0;      // found the spinner busy and slept to the deadline
    Nanos spun = 0;                // time spent spinning: a core's CPU time
    std::array<Nanos, kLengthClasses> windows{};  // the spin window now, per length class
  };
  Stats stats() const;
  // Zeroes the counters; the windows learned stay.
  void reset_stats();

 private:
  // The last stretch: spin, or sleep if another wait is spinning.
  void spin_or_sleep(Nanos deadline);
  void spin_until(Nanos deadline);

  std::array<WaitWindow, kLengthClasses> windows_;
  std::atomic<int> spinning_{0};
  std::atomic<std::uint64_t> waits_{0}, slept_{0}, woke_late_{0}, shared_{0}, behind_{0};
  std::atomic<Nanos> spun_{0};
};

// Time moves only when told to, or when someone waits.
class ManualClock final : public Clock {
 public:
  Nanos now() const override { return now_.load(); }
  void wait_until(Nanos deadline) override {
    Nanos t = now_.load();
    while (t < deadline && !now_.compare_exchange_weak(t, deadline)) {
    }
  }
  void advance(Nanos by) { now_ += by; }

 private:
  std::atomic<Nanos> now_{0};
};

}  // namespace nvj
