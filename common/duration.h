// SPDX-License-Identifier: BSD-3-Clause
// Virtual time and durations as users write them: "2us", "1.5ms", "10ms".
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

namespace nvj {

// Nanoseconds on a device's clock (virtual in tests, CLOCK_MONOTONIC when
// serving).
using Nanos = std::int64_t;

constexpr Nanos kMicro = 1'000;
constexpr Nanos kMilli = 1'000'000;
constexpr Nanos kSecond = 1'000'000'000;

// A decimal number with a unit: ns, us, ms or s ("2us", "1.5ms", "0s").
// Throws std::invalid_argument saying what is wrong.
Nanos parse_duration(std::string_view text);

// A wall-clock span as people give a time limit: a number of seconds, or a
// number with a unit s, m (minutes) or h ("90", "90s", "2.5m", "1h"), at
// most 30 days. Throws std::invalid_argument saying what is wrong.
Nanos parse_wall_duration(std::string_view text);

// "2 us", "1.5 ms", "800 ns": for descriptions.
std::string format_duration(Nanos ns);

// Seconds on the steady clock since `start`: how long a tool's own step took.
double seconds_since(std::chrono::steady_clock::time_point start);

__extension__ using Uint128 = unsigned __int128;  // GCC and Clang; products of two 64-bit values

// Time to move `bytes` at `bytes_per_second` (0 = no limit), rounded up.
constexpr Nanos transfer_time(std::uint64_t bytes, std::uint64_t bytes_per_second) {
  if (bytes_per_second == 0) return 0;
  return static_cast<Nanos>((static_cast<Uint128>(bytes) * kSecond + bytes_per_second - 1) / bytes_per_second);
}

}  // namespace nvj
