// SPDX-License-Identifier: BSD-3-Clause
// The crash lab's one hash: XXH3 from xxHash (the distribution's libxxhash).
// It spreads things (which states a sample or a random subset takes) and
// makes fingerprints, and it never names anything alone: a fingerprint that
// matches is verified against the contents (crashlab/states/state_prints.h), and a cache
// is keyed by the exact words that name what it holds (crashlab/facts/fact_checker.h). Pure.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace crashlab {

std::uint64_t hash_bytes(const void* data, std::size_t size, std::uint64_t seed = 0);

// Of numbers, as their bytes in memory.
std::uint64_t hash_words(std::span<const std::uint64_t> words, std::uint64_t seed = 0);

template <typename... Words>
std::uint64_t hash_of(Words... words) {
  const std::uint64_t w[] = {static_cast<std::uint64_t>(words)...};
  return hash_words(w);
}

// For std::unordered_map over exact keys made of words.
struct WordsHash {
  template <typename Words>
  std::size_t operator()(const Words& words) const {
    return static_cast<std::size_t>(hash_words(std::span<const std::uint64_t>(words.data(), words.size())));
  }
};

}  // namespace crashlab
