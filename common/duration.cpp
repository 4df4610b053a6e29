#include "common/duration.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <stdexcept>

namespace nvj {

Nanos parse_duration(std::string_view text) {
  auto bad = [&](const std::string& why) {
    return std::invalid_argument("'" + std::string(text) + "' is not a duration (" + why +
                                 "; expected a number with a unit ns, us, ms or s, like 2us or 1.5ms)");
  };
  std::size_t digits = 0;
  while (digits < text.size() && (std::isdigit(static_cast<unsigned char>(text[digits])) || text[digits] == '.'))
    ++digits;
  if (digits == 0) throw bad(text.empty() ? "empty" : text[0] == '-' ? "negative" : "no number");
  double value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + digits, value);
  if (ec != std::errc() || end != text.data() + digits) throw bad("bad number");
  const std::string_view unit = text.substr(digits);
  double scale = 0;
  if (unit == "ns") scale = 1;
  else if (unit == "us") scale = 1e3;
  else if (unit == "ms") scale = 1e6;
  else if (unit == "s") scale = 1e9;
  else throw bad(unit.empty() ? "no unit" : "unknown unit '" + std::string(unit) + "'");
  const double ns = value * scale;
  if (ns > 3600e9) throw bad("longer than an hour");
  return static_cast<Nanos>(std::llround(ns));
}

Nanos parse_wall_duration(std::string_view text) {
  auto bad = [&](const std::string& why) {
    return std::invalid_argument("'" + std::string(text) + "' is not a time (" + why +
                                 "; expected seconds, or a number with a unit s, m or h, like 90s or 10m)");
  };
  std::size_t digits = 0;
  while (digits < text.size() && (std::isdigit(static_cast<unsigned char>(text[digits])) || text[digits] == '.'))
    ++digits;
  if (digits == 0) throw bad(text.empty() ? "empty" : text[0] == '-' ? "negative" : "no number");
  double value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + digits, value);
  if (ec != std::errc() || end != text.data() + digits) throw bad("bad number");
  const std::string_view unit = text.substr(digits);
  double scale = 0;
  if (unit.empty() || unit == "s") scale = 1;
  else if (unit == "m") scale = 60;
  else if (unit == "h") scale = 3600;
  else throw bad("unknown unit '" + std::string(unit) + "'");
  const double seconds = value * scale;
  if (seconds > 30 * 86400.0) throw bad("longer than 30 days");
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

}  // namespace nvj
