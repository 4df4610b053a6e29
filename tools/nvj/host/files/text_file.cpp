// SPDX-License-Identifier: BSD-3-Clause
#include "tools/nvj/host/files/text_file.h"

#include <fstream>
#include <sstream>
#include <stdexcept>

namespace nvj::cli {

std::string read_text_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void write_text_file(const std::filesystem::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) throw std::runtime_error("cannot write " + path.string());
}

}  // namespace nvj::cli
