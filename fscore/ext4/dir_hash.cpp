// SPDX-License-Identifier: BSD-3-Clause
#include "fscore/ext4/dir_hash.h"

#include <algorithm>
#include <bit>

namespace fscore::ext4 {

namespace {

constexpr std::uint32_t kEof32 = 0x7fffffff;

// The name's bytes as chars of the version's signedness.
std::uint32_t char_value(char c, bool is_unsigned) {
  return is_unsigned ? static_cast<std::uint32_t>(static_cast<unsigned char>(c))
                     : static_cast<std::uint32_t>(static_cast<int>(static_cast<signed char>(c)));
}

std::uint32_t legacy(std::string_view name, bool is_unsigned) {
  std::uint32_t h0 = 0x12a3fe2d, h1 = 0x37abe8f9;
  for (const char c : name) {
    std::uint32_t h = h1 + (h0 ^ (char_value(c, is_unsigned) * 7152373u));
    if ((h & 0x80000000u) != 0) h -= 0x7fffffff;
    h1 = h0;
    h0 = h;
  }
  return h0 << 1;
}

// Up to `words` words of the name, four bytes each, big-endian within a
// word, padded with the name's length in every byte.
void words_of(std::string_view name, bool is_unsigned, std::uint32_t* out, int words) {
  std::uint32_t pad = static_cast<std::uint32_t>(name.size()) | static_cast<std::uint32_t>(name.size()) << 8;
  pad |= pad << 16;
  std::uint32_t value = pad;
  const std::size_t take = std::min<std::size_t>(name.size(), static_cast<std::size_t>(words) * 4);
  int left = words;
  for (std::size_t i = 0; i < take; ++i) {
    value = char_value(name[i], is_unsigned) + (value << 8);
    if (i % 4 == 3) {
      *out++ = value;
      value = pad;
      --left;
    }
  }
  if (--left >= 0) *out++ = value;
  while (--left >= 0) *out++ = pad;
}

void tea(std::uint32_t buf[4], const std::uint32_t in[4]) {
  constexpr std::uint32_t kDelta = 0x9E3779B9;
  std::uint32_t sum = 0, b0 = buf[0], b1 = buf[1];
  for (int n = 0; n < 16; ++n) {
    sum += kDelta;
    b0 += ((b1 << 4) + in[0]) ^ (b1 + sum) ^ ((b1 >> 5) + in[1]);
    b1 += ((b0 << 4) + in[2]) ^ (b0 + sum) ^ ((b0 >> 5) + in[3]);
  }
  buf[0] += b0;
  buf[1] += b1;
}

void half_md4(std::uint32_t buf[4], const std::uint32_t in[8]) {
  const auto f = [](std::uint32_t x, std::uint32_t y, std::uint32_t z) { return z ^ (x & (y ^ z)); };
  const auto g = [](std::uint32_t x, std::uint32_t y, std::uint32_t z) { return (x & y) + ((x ^ y) & z); };
  const auto h = [](std::uint32_t x, std::uint32_t y, std::uint32_t z) { return x ^ y ^ z; };
  constexpr std::uint32_t k2 = 013240474631u, k3 = 015666365641u;
  std::uint32_t v[4] = {buf[0], buf[1], buf[2], buf[3]};  // a, b, c, d
  // Each step: v[t] = rotl(v[t] + fn(v[t+1], v[t+2], v[t+3]) + in[i] + k, s),
  // the targets turning a, d, c, b.
  const auto round = [&](auto fn, const int (&order)[8], const int (&shift)[4], std::uint32_t k) {
    for (int step = 0; step < 8; ++step) {
      const int t = (4 - step % 4) % 4;
      std::uint32_t& a = v[t];
      a += fn(v[(t + 1) % 4], v[(t + 2) % 4], v[(t + 3) % 4]) + in[order[step]] + k;
      a = std::rotl(a, shift[step % 4]);
    }
  };
  round(f, {0, 1, 2, 3, 4, 5, 6, 7}, {3, 7, 11, 19}, 0);
  round(g, {1, 3, 5, 7, 0, 2, 4, 6}, {3, 5, 9, 13}, k2);
  round(h, {3, 7, 2, 6, 1, 5, 0, 4}, {3, 9, 11, 15}, k3);
  for (int i = 0; i < 4; ++i) buf[i] += v[i];
}

}  // namespace

std::optional<std::uint32_t> dir_hash(std::uint8_t version, const std::array<std::uint32_t, 4>& seed,
                                      std::string_view name) {
  std::uint32_t buf[4] = {0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476};
  if (seed[0] != 0 || seed[1] != 0 || seed[2] != 0 || seed[3] != 0)
    for (int i = 0; i < 4; ++i) buf[i] = seed[static_cast<std::size_t>(i)];
  std::uint32_t hash = 0;
  switch (static_cast<DirHash>(version)) {
    case DirHash::legacy:
    case DirHash::legacy_unsigned:
      hash = legacy(name, version == static_cast<std::uint8_t>(DirHash::legacy_unsigned));
      break;
    case DirHash::half_md4:
    case DirHash::half_md4_unsigned: {
      const bool is_unsigned = version == static_cast<std::uint8_t>(DirHash::half_md4_unsigned);
      std::uint32_t in[8];
      for (std::size_t at = 0; at < name.size(); at += 32) {
        words_of(name.substr(at), is_unsigned, in, 8);
        half_md4(buf, in);
      }
      hash = buf[1];
      break;
    }
    case DirHash::tea:
    case DirHash::tea_unsigned: {
      const bool is_unsigned = version == static_cast<std::uint8_t>(DirHash::tea_unsigned);
      std::uint32_t in[4];
      for (std::size_t at = 0; at < name.size(); at += 16) {
        words_of(name.substr(at), is_unsigned, in, 4);
        tea(buf, in);
      }
      hash = buf[0];
      break;
    }
    default:
      return std::nullopt;
  }
  hash &= ~1u;
  if (hash == kEof32 << 1) hash = (kEof32 - 1) << 1;
  return hash;
}

}  // namespace fscore::ext4
