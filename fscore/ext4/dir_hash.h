// SPDX-License-Identifier: BSD-3-Clause
// The hash of a name in an ext4 htree directory, as the kernel computes it
// to find the name's leaf (fs/ext4/hash.c): the legacy hash, half-MD4 and
// TEA, each reading the name's bytes as signed or unsigned chars (the
// superblock's flags say which; e2fsprogs calls the unsigned ones
// versions 3 to 5), seeded with the superblock's s_hash_seed (all zeroes:
// the default seed). The result is the major hash, its low bit clear (the
// bit an index entry uses to mark a hash collision's continuation), the
// end-of-directory value (0x7fffffff << 1) moved one below. SipHash (for
// casefolded, encrypted names) needs a key the lab never has. Pure.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

namespace fscore::ext4 {

enum class DirHash : std::uint8_t {
  legacy = 0,
  half_md4 = 1,
  tea = 2,
  legacy_unsigned = 3,
  half_md4_unsigned = 4,
  tea_unsigned = 5,
  siphash = 6,
};

// The hash of `name`, or nullopt for a version there is no computing here
// (SipHash, or none of these).
std::optional<std::uint32_t> dir_hash(std::uint8_t version, const std::array<std::uint32_t, 4>& seed,
                                      std::string_view name);

}  // namespace fscore::ext4
