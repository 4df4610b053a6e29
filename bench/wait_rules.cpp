// SPDX-License-Identifier: BSD-3-Clause
// wait_rules: how well rules for the clock's spin window would have done on
// this machine's own wake-ups. It first records real sleeps (clock_nanosleep
// to an absolute deadline, timer slack 1 ns, as common/clock.cpp sleeps), of
// lengths drawn log-uniform from 20 us to 10 ms, each followed by 20 us of
// spinning as a wait's end would; then replays the same sequence of
// (length, lateness) under each rule: a wait no longer than its window spins
// all of it; a longer one sleeps to `deadline - window`, wakes as late as the
// recorded sleep did, and either spins the rest or, woken past the deadline,
// is late. The rule learns from each sleep as MonotonicClock does.
//
// Rules: the clock's (waits under MonotonicClock::kSpinBelow spin all the
// way; one WaitWindow per length class above, floor 80 us, the class by
// MonotonicClock::length_class), the rule it replaced (one window for every
// length, twice the mean lateness, floor 80 us) as the peer, and the
// variants between them: the old window with short waits spun, the clock's
// with a floor of 40 us, and per class with twice the mean alone.
//
// Usage: wait_rules [SLEEPS] [SEED]   (default 3000 sleeps, seed 1)
#include <sys/prctl.h>
#include <time.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/wait_window.h"

using nvj::kMicro;
using nvj::kMilli;
using nvj::Nanos;

namespace {

struct Sleep {
  Nanos length;
  Nanos late;
};

std::vector<Sleep> record(int count, unsigned seed) {
  ::prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
  nvj::MonotonicClock clock;
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> log_length(std::log(20e3), std::log(10e6));
  std::vector<Sleep> sleeps;
  for (int i = 0; i < count; ++i) {
    const auto length = static_cast<Nanos>(std::exp(log_length(rng)));
    const Nanos deadline = clock.now() + length;
    timespec ts{static_cast<time_t>(deadline / nvj::kSecond), static_cast<long>(deadline % nvj::kSecond)};
    while (::clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr) != 0) {
    }
    const Nanos woke = clock.now();
    sleeps.push_back({length, woke - deadline});
    while (clock.now() < woke + 20 * kMicro) {
    }
  }
  return sleeps;
}

// A rule: the window for a wait of a length, what it learns from a sleep,
// and from a wait that spun all the way.
struct Rule {
  std::string name;
  std::function<Nanos(Nanos length)> window;
  std::function<void(Nanos length, Nanos late)> learn;
  std::function<void(Nanos length)> spun_through = [](Nanos) {};
  Nanos spin_below = 0;  // shorter waits spin all the way, whatever the window
};

// One WaitWindow per length class, as MonotonicClock keeps them.
Rule per_class(Nanos floor) {
  auto windows = std::make_shared<std::vector<std::unique_ptr<nvj::WaitWindow>>>();
  for (int i = 0; i < nvj::MonotonicClock::kLengthClasses; ++i)
    windows->push_back(std::make_unique<nvj::WaitWindow>(floor));
  auto of = [windows](Nanos length) -> nvj::WaitWindow& {
    return *(*windows)[static_cast<std::size_t>(nvj::MonotonicClock::length_class(length))];
  };
  return {"under 256 us spin; above, per length class, the larger of twice the mean and the 97th percentile + "
          "10 us, floor " + std::to_string(floor / kMicro) + " us" + (floor == 80 * kMicro ? " (the clock now)" : ""),
          [of](Nanos length) { return of(length).window(); },
          [of](Nanos length, Nanos late) { of(length).learn(late); },
          [of](Nanos length) { of(length).spun_through(length); }, nvj::MonotonicClock::kSpinBelow};
}

// Per length class as the clock, but twice the mean alone.
Rule per_class_mean(Nanos floor) {
  auto means = std::make_shared<std::array<Nanos, nvj::MonotonicClock::kLengthClasses>>();
  auto at = [means](Nanos length) -> Nanos& {
    return (*means)[static_cast<std::size_t>(nvj::MonotonicClock::length_class(length))];
  };
  return {"under 256 us spin; above, per length class, twice the mean, floor " + std::to_string(floor / kMicro) + " us",
          [at, floor](Nanos length) { return std::clamp<Nanos>(2 * at(length), floor, 2 * kMilli); },
          [at](Nanos length, Nanos late) { at(length) += (late - at(length)) / 16; }, [](Nanos) {},
          nvj::MonotonicClock::kSpinBelow};
}

// The rule before: one window, twice the moving mean, within [80 us, 2 ms];
// with `spin_below`, shorter waits spin all the way, as the clock's do now.
Rule twice_the_mean(Nanos spin_below) {
  auto mean = std::make_shared<Nanos>(0);
  return {spin_below == 0 ? "one window for all lengths, twice the mean, floor 80 us (the rule before)"
                          : "under 256 us spin; above, one window, twice the mean, floor 80 us",
          [mean](Nanos) { return std::clamp<Nanos>(2 * *mean, 80 * kMicro, 2 * kMilli); },
          [mean](Nanos, Nanos late) { *mean += (late - *mean) / 16; }, [](Nanos) {}, spin_below};
}

struct Outcome {
  int waits = 0, slept = 0, late = 0;
  Nanos spun = 0;
  std::vector<Nanos> lateness;  // of the waits woken past their deadline
};

Outcome replay(const std::vector<Sleep>& sleeps, const Rule& rule) {
  Outcome o;
  for (const Sleep& s : sleeps) {
    ++o.waits;
    if (s.length < rule.spin_below) {
      o.spun += s.length;
      continue;
    }
    const Nanos window = rule.window(s.length);
    if (s.length <= window) {  // spins all the way
      o.spun += s.length;
      rule.spun_through(s.length);
      continue;
    }
    ++o.slept;
    rule.learn(s.length, s.late);
    if (s.late > window) {
      ++o.late;
      o.lateness.push_back(s.late - window);
    } else {
      o.spun += window - s.late;
    }
  }
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  const int count = argc > 1 ? std::atoi(argv[1]) : 3000;
  const unsigned seed = argc > 2 ? static_cast<unsigned>(std::atoi(argv[2])) : 1;
  if (count < 1) {
    std::fprintf(stderr, "wait_rules: SLEEPS must be a positive number\n");
    return 2;
  }
  const std::vector<Sleep> sleeps = record(count, seed);
  std::vector<Nanos> late;
  for (const Sleep& s : sleeps) late.push_back(s.late);
  std::sort(late.begin(), late.end());
  auto at = [&](double q) {
    return static_cast<double>(late[static_cast<std::size_t>(q * static_cast<double>(late.size() - 1))]) / 1e3;
  };
  std::printf("%d sleeps of 20 us to 10 ms: woke late by p50 %.1f us, p90 %.1f, p99 %.1f, max %.1f\n\n", count, at(0.5),
              at(0.9), at(0.99), at(1.0));
  std::printf("| rule | waits that slept | woke past the deadline | by (p50 us) | spin per wait (us) |\n");
  std::printf("|---|---:|---:|---:|---:|\n");
  for (const Rule& rule : {twice_the_mean(0), per_class(80 * kMicro), twice_the_mean(nvj::MonotonicClock::kSpinBelow),
                           per_class(40 * kMicro), per_class_mean(80 * kMicro)}) {
    Outcome o = replay(sleeps, rule);
    std::sort(o.lateness.begin(), o.lateness.end());
    const double by = o.lateness.empty() ? 0.0 : static_cast<double>(o.lateness[o.lateness.size() / 2]) / 1e3;
    std::printf("| %s | %d | %.2f%% | %.1f | %.1f |\n", rule.name.c_str(), o.slept,
                100.0 * o.late / o.waits, by, static_cast<double>(o.spun) / 1e3 / o.waits);
  }
  return 0;
}
