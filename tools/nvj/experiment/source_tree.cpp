// SPDX-License-Identifier: BSD-3-Clause
#include "tools/nvj/experiment/source_tree.h"

#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "tools/nvj/host/processes/process.h"

namespace nvj::cli {
namespace fs = std::filesystem;

std::uint64_t next_random(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

void write_random_file(const fs::path& path, std::uint64_t size, std::uint64_t& state) {
  std::vector<char> bytes((size + 7) / 8 * 8);
  for (std::size_t i = 0; i < bytes.size(); i += 8) {
    const std::uint64_t r = next_random(state);
    for (std::size_t b = 0; b < 8; ++b) bytes[i + b] = static_cast<char>(r >> (8 * b));
  }
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(size));
  if (!out) throw std::runtime_error("cannot write " + path.string());
}

fs::path make_tree_archive(const fs::path& dir, std::uint32_t files, std::uint32_t folders) {
  const fs::path root = dir / "tree";
  std::uint64_t state = 2015;
  for (std::uint32_t i = 0; i < files; ++i) {
    const std::uint32_t f = i % folders;
    const fs::path folder = root / ("dir" + std::to_string(f % 8)) / ("sub" + std::to_string(f));
    fs::create_directories(folder);
    const int bits = 8 + static_cast<int>(next_random(state) % 8);  // 256 B .. 64 KiB
    const std::uint64_t size = (1ull << bits) + next_random(state) % (1ull << bits);
    write_random_file(folder / ("file" + std::to_string(i) + ".c"), size, state);
  }
  const fs::path archive = dir / "tree.tar";
  run_checked({"tar", "-cf", archive.string(), "-C", root.string(), "."});
  fs::remove_all(root);
  return archive;
}

}  // namespace nvj::cli
