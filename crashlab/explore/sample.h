// SPDX-License-Identifier: BSD-3-Clause
// A uniform random sample of a bound's workloads (nvj crash explore
// --sample N --seed S): N distinct ordinals of 0..count-1, every subset of
// N equally likely, the same for the same seed on every machine (the
// generator is std::mt19937_64, whose output the standard fixes, and the
// draws below use no distribution of the library, whose results it does
// not). Floyd's algorithm: N draws and N ordinals of memory, whatever the
// bound's size (seq-3 holds 84 million). Pure.
#pragma once

#include <cstdint>
#include <vector>

namespace crashlab::explore {

// `n` ordinals of 0..count-1, ascending; std::invalid_argument when n is 0
// or more than count.
std::vector<std::uint64_t> sample_ordinals(std::uint64_t count, std::uint64_t n, std::uint64_t seed);

}  // namespace crashlab::explore
