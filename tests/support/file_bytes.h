// SPDX-License-Identifier: BSD-3-Clause
// The whole of a file, as bytes (a recording, an image): what the tests
// compare and hand to readers that take a span of bytes. Read in one go:
// the tests are built without optimisation, where a byte-wise stream
// iterator took seconds for a recording of a few hundred MiB.
#pragma once

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace nvj::test {

inline std::vector<std::uint8_t> file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return {};
  std::vector<std::uint8_t> bytes(std::filesystem::file_size(path));
  if (!in.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(bytes.size())))
    throw std::runtime_error("reading " + path + " failed");
  return bytes;
}

}  // namespace nvj::test
