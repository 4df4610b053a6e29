// SPDX-License-Identifier: BSD-3-Clause
// Whole small files as text: logs, /proc and /sys entries, captured output.
#pragma once

#include <filesystem>
#include <string>

namespace nvj::cli {

// The file's bytes, or "" if it cannot be read.
std::string read_text_file(const std::filesystem::path& path);

}  // namespace nvj::cli
