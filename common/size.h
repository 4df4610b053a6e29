// SPDX-License-Identifier: BSD-3-Clause
// Sizes as users write them in parameters: "1G", "64M", "512", "4KiB".
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace nvj {

// A whole number of bytes with an optional binary suffix: b (bytes), s
// (512-byte sectors), K, M, G, T, P, E (powers of 1024; "KiB" and "KB" mean
// the same). Case-insensitive. Throws std::invalid_argument saying what is
// wrong (not a number, unknown suffix, too large).
std::uint64_t parse_size(std::string_view text);

// The shortest exact form: "1 GiB", "64 MiB", "1536 KiB", "1000 bytes".
std::string format_size(std::uint64_t bytes);

}  // namespace nvj
