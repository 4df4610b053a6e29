// SPDX-License-Identifier: BSD-3-Clause
#include "fscore/uuid.h"

#include <algorithm>

namespace fscore {
namespace {

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

std::optional<Uuid> parse_uuid(std::string_view text) {
  if (text.size() != 36) return std::nullopt;
  Uuid uuid{};
  std::size_t byte = 0;
  for (std::size_t i = 0; i < text.size();) {
    if (i == 8 || i == 13 || i == 18 || i == 23) {
      if (text[i] != '-') return std::nullopt;
      ++i;
      continue;
    }
    const int hi = hex_value(text[i]);
    const int lo = hex_value(text[i + 1]);
    if (hi < 0 || lo < 0) return std::nullopt;
    uuid[byte++] = static_cast<std::uint8_t>(hi * 16 + lo);
    i += 2;
  }
  return uuid;
}

std::string format_uuid(const Uuid& uuid) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string text;
  for (std::size_t i = 0; i < uuid.size(); ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) text += '-';
    text += kDigits[uuid[i] >> 4];
    text += kDigits[uuid[i] & 15];
  }
  return text;
}

bool is_nil(const Uuid& uuid) {
  return std::all_of(uuid.begin(), uuid.end(), [](std::uint8_t b) { return b == 0; });
}

Uuid make_random_uuid(std::array<std::uint8_t, 16> r) {
  r[6] = static_cast<std::uint8_t>((r[6] & 0x0F) | 0x40);  // version 4
  r[8] = static_cast<std::uint8_t>((r[8] & 0x3F) | 0x80);  // RFC 4122 variant
  return r;
}

}  // namespace fscore
