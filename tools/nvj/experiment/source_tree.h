// SPDX-License-Identifier: BSD-3-Clause
// A seeded source-like tree for the experiments that untar one
// (enospc2015, phillips2014): the same files on every machine, packed as a
// tar archive, and files of random bytes.
#pragma once

#include <cstdint>
#include <filesystem>

namespace nvj::cli {

// splitmix64: the next number of `state`.
std::uint64_t next_random(std::uint64_t& state);

// `size` bytes from `state` into `path` (replaced).
void write_random_file(const std::filesystem::path& path, std::uint64_t size, std::uint64_t& state);

// `files` files (sizes log-uniform from 256 B to 64 KiB, named like C
// sources) dealt round-robin into `folders` folders two levels deep (8 at
// the top), packed as dir/tree.tar; the tree itself is removed. Returns
// the archive's path.
std::filesystem::path make_tree_archive(const std::filesystem::path& dir, std::uint32_t files, std::uint32_t folders);

}  // namespace nvj::cli
