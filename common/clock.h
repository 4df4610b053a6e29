// Clock: the device's time, and waiting for it. The seam between the models
// (virtual time) and the server (real time), like LevelDB's Env: tests use
// ManualClock and never sleep.
#pragma once

#include <atomic>

#include "common/duration.h"

namespace nvj {

class Clock {
 public:
  virtual ~Clock() = default;
  virtual Nanos now() const = 0;
  // Returns no earlier than `deadline`.
  virtual void wait_until(Nanos deadline) = 0;
};

// CLOCK_MONOTONIC. A wait sleeps (timer slack 1 ns) until a spin window
// before the deadline, then spins for the rest: sleeping alone overshoots by
// tens of microseconds here, more after long sleeps (docs/timing.md). The
// window adapts: it is twice the average overshoot the sleeps have shown, at
// least `min_window` (80 us) and at most 2 ms. One thread spins at a time:
// with two cores and sixteen requests in flight, every waiter spinning would
// starve the rest; a waiter that finds the spinner busy sleeps the last
// stretch too.
class MonotonicClock final : public Clock {
 public:
  explicit MonotonicClock(Nanos min_window = 80 * kMicro) : min_window_(min_window) {}
  Nanos now() const override;
  void wait_until(Nanos deadline) override;
  Nanos spin_window() const;

 private:
  const Nanos min_window_;
  std::atomic<int> spinning_{0};
  std::atomic<Nanos> overshoot_{0};  // moving average of how late sleeps wake, ns
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
