// SPDX-License-Identifier: BSD-3-Clause
#include "crashlab/states/hash.h"

#include <xxhash.h>

namespace crashlab {

std::uint64_t hash_bytes(const void* data, std::size_t size, std::uint64_t seed) {
  return XXH3_64bits_withSeed(data, size, seed);
}

std::uint64_t hash_words(std::span<const std::uint64_t> words, std::uint64_t seed) {
  return XXH3_64bits_withSeed(words.data(), words.size_bytes(), seed);
}

}  // namespace crashlab
