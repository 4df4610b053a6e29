// SPDX-License-Identifier: BSD-3-Clause
#include "common/size.h"

#include <cctype>
#include <limits>
#include <stdexcept>

namespace nvj {
namespace {

constexpr std::string_view kForm = "a whole number of bytes with an optional suffix b, s, K, M, G, T, P or E";

std::invalid_argument bad(std::string_view text, std::string_view why) {
  return std::invalid_argument("'" + std::string(text) + "' is not a size (" + std::string(why) + "; expected " +
                               std::string(kForm) + ")");
}

int shift_for(char c) {
  switch (std::tolower(static_cast<unsigned char>(c))) {
    case 'b': return 0;
    case 's': return 9;
    case 'k': return 10;
    case 'm': return 20;
    case 'g': return 30;
    case 't': return 40;
    case 'p': return 50;
    case 'e': return 60;
    default: return -1;
  }
}

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i]))) return false;
  return true;
}

}  // namespace

std::uint64_t parse_size(std::string_view text) {
  if (text.empty()) throw bad(text, "empty");
  std::size_t i = 0;
  std::uint64_t value = 0;
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) {
    const auto digit = static_cast<std::uint64_t>(text[i] - '0');
    if (value > (std::numeric_limits<std::uint64_t>::max() - digit) / 10) throw bad(text, "too large");
    value = value * 10 + digit;
    ++i;
  }
  if (i == 0) throw bad(text, text[0] == '-' ? "negative" : "no number");
  const std::string_view suffix = text.substr(i);
  if (suffix.empty()) return value;

  const int shift = shift_for(suffix[0]);
  const std::string_view rest = suffix.substr(1);
  const bool multiple = shift >= 10;
  if (shift < 0 || !(rest.empty() || (multiple && (iequals(rest, "ib") || iequals(rest, "b")))))
    throw bad(text, "unknown suffix '" + std::string(suffix) + "'");
  if (value > (std::numeric_limits<std::uint64_t>::max() >> shift)) throw bad(text, "too large");
  return value << shift;
}

std::string format_size(std::uint64_t bytes) {
  static constexpr const char* kUnits[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  if (bytes == 0 || bytes % 1024 != 0) return std::to_string(bytes) + (bytes == 1 ? " byte" : " bytes");
  int unit = -1;
  while (bytes % 1024 == 0 && unit < 5) {
    bytes /= 1024;
    ++unit;
  }
  return std::to_string(bytes) + " " + kUnits[unit];
}

}  // namespace nvj
