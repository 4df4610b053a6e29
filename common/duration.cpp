// SPDX-License-Identifier: BSD-3-Clause
#include "common/duration.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <initializer_list>
#include <stdexcept>

namespace nvj {

namespace {

struct Unit {
  std::string_view name;
  double scale;
};

// A decimal number followed by one of `units` (an empty name: the number
// alone); the number times that unit's scale, at most `max`. `what` and
// `expected` go into the error ("'x' is not a WHAT (why; EXPECTED)").
double parse_scaled(std::string_view text, std::initializer_list<Unit> units, double max, const char* what,
                    const char* expected, const char* too_long) {
  auto bad = [&](const std::string& why) {
    return std::invalid_argument("'" + std::string(text) + "' is not a " + what + " (" + why + "; " + expected + ")");
  };
  std::size_t digits = 0;
  while (digits < text.size() && (std::isdigit(static_cast<unsigned char>(text[digits])) || text[digits] == '.'))
    ++digits;
  if (digits == 0) throw bad(text.empty() ? "empty" : text[0] == '-' ? "negative" : "no number");
  double value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + digits, value);
  if (ec != std::errc() || end != text.data() + digits) throw bad("bad number");
  const std::string_view unit = text.substr(digits);
  for (const Unit& u : units) {
    if (u.name != unit) continue;
    if (value * u.scale > max) throw bad(too_long);
    return value * u.scale;
  }
  throw bad(unit.empty() ? "no unit" : "unknown unit '" + std::string(unit) + "'");
}

}  // namespace

Nanos parse_duration(std::string_view text) {
  const double ns = parse_scaled(text, {{"ns", 1}, {"us", 1e3}, {"ms", 1e6}, {"s", 1e9}}, 3600e9, "duration",
                                 "expected a number with a unit ns, us, ms or s, like 2us or 1.5ms",
                                 "longer than an hour");
  return static_cast<Nanos>(std::llround(ns));
}

Nanos parse_wall_duration(std::string_view text) {
  const double seconds = parse_scaled(text, {{"", 1}, {"s", 1}, {"m", 60}, {"h", 3600}}, 30 * 86400.0, "time",
                                      "expected seconds, or a number with a unit s, m or h, like 90s or 10m",
                                      "longer than 30 days");
  return static_cast<Nanos>(std::llround(seconds * 1e9));
}

std::string format_duration(Nanos ns) {
  char buf[64];
  if (ns < kMicro) std::snprintf(buf, sizeof buf, "%lld ns", static_cast<long long>(ns));
  else if (ns < kMilli) std::snprintf(buf, sizeof buf, "%g us", static_cast<double>(ns) / 1e3);
  else if (ns < kSecond) std::snprintf(buf, sizeof buf, "%g ms", static_cast<double>(ns) / 1e6);
  else std::snprintf(buf, sizeof buf, "%g s", static_cast<double>(ns) / 1e9);
  return buf;
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace nvj
