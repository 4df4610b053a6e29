// SPDX-License-Identifier: BSD-3-Clause
// A fresh directory for one test under the system's temporary folder (or
// under `parent`: a test that needs a real disk filesystem, which tmpfs may
// not be), removed with everything in it when the test ends, passed or not.
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <system_error>

namespace nvj::test {

struct TempDir {
  std::filesystem::path path;
  explicit TempDir(const std::filesystem::path& parent = std::filesystem::temp_directory_path()) {
    std::string templ = (parent / "nvj-test-XXXXXX").string();
    if (mkdtemp(templ.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path = templ;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  std::string file(const std::string& name) const { return (path / name).string(); }
  // Empties it (it stays).
  void clear() const {
    for (const auto& e : std::filesystem::directory_iterator(path)) std::filesystem::remove_all(e.path());
  }
};

// Writes `text` to the file `p`, making its folders.
inline void write_file(const std::filesystem::path& p, const std::string& text) {
  std::filesystem::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << text;
}

}  // namespace nvj::test
