// SPDX-License-Identifier: BSD-3-Clause
// CRC-32C (Castagnoli), as ext4's metadata_csum and jbd2's v2/v3 checksums
// use it: the raw register, with no inversion on entry or exit. Callers pass
// the seed (~0 for a fresh checksum) and get the register back, exactly like
// the kernel's crc32c() and e2fsprogs' ext2fs_crc32c_le().
//
// The standard CRC-32C of a buffer is ~crc32c(~0u, buf, n).
#pragma once

#include <cstddef>
#include <cstdint>

namespace fscore {

std::uint32_t crc32c(std::uint32_t crc, const void* data, std::size_t n) noexcept;

// The standard CRC-32C of A followed by B, from the standard CRC-32C of A,
// that of B and B's length, without the bytes: what lets a file's checksum
// be put together from checksums of its parts.
std::uint32_t crc32c_combine(std::uint32_t crc_a, std::uint32_t crc_b, std::uint64_t length_b) noexcept;

// The portable table-driven path, exposed so tests compare it with the
// hardware path on machines that have one.
std::uint32_t crc32c_portable(std::uint32_t crc, const void* data, std::size_t n) noexcept;

}  // namespace fscore
