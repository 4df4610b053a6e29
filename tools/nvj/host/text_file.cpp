// SPDX-License-Identifier: BSD-3-Clause
#include "tools/nvj/host/text_file.h"

#include <fstream>
#include <sstream>

namespace nvj::cli {

std::string read_text_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace nvj::cli
