// SPDX-License-Identifier: BSD-3-Clause
// 128-bit UUIDs as ext4 and jbd2 store them: 16 bytes in the order of the
// text form.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace fscore {

using Uuid = std::array<std::uint8_t, 16>;

// "01234567-89ab-cdef-0123-456789abcdef"; nullopt unless exactly that form.
std::optional<Uuid> parse_uuid(std::string_view text);
std::string format_uuid(const Uuid& uuid);
bool is_nil(const Uuid& uuid);
// A version 4 (random) UUID from 16 random bytes supplied by the caller.
Uuid make_random_uuid(std::array<std::uint8_t, 16> random_bytes);

}  // namespace fscore
