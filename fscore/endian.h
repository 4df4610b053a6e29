// SPDX-License-Identifier: BSD-3-Clause
// Byte order of on-disk fields: ext4 is little-endian, jbd2 big-endian.
// Loads and stores go through memcpy so unaligned buffers are fine.
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>

namespace fscore {

template <typename T>
constexpr T byteswap(T v) noexcept {
  static_assert(std::is_unsigned_v<T>);
  if constexpr (sizeof(T) == 1) {
    return v;
  } else if constexpr (sizeof(T) == 2) {
    return static_cast<T>(__builtin_bswap16(v));
  } else if constexpr (sizeof(T) == 4) {
    return static_cast<T>(__builtin_bswap32(v));
  } else {
    return static_cast<T>(__builtin_bswap64(v));
  }
}

template <typename T>
T load_le(const void* p) noexcept {
  T v;
  std::memcpy(&v, p, sizeof v);
  if constexpr (std::endian::native == std::endian::big) v = byteswap(v);
  return v;
}

template <typename T>
T load_be(const void* p) noexcept {
  T v;
  std::memcpy(&v, p, sizeof v);
  if constexpr (std::endian::native == std::endian::little) v = byteswap(v);
  return v;
}

template <typename T>
void store_le(void* p, T v) noexcept {
  if constexpr (std::endian::native == std::endian::big) v = byteswap(v);
  std::memcpy(p, &v, sizeof v);
}

template <typename T>
void store_be(void* p, T v) noexcept {
  if constexpr (std::endian::native == std::endian::little) v = byteswap(v);
  std::memcpy(p, &v, sizeof v);
}

}  // namespace fscore
