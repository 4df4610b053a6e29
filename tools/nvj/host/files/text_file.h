// SPDX-License-Identifier: BSD-3-Clause
// Whole small files as text: logs, /proc and /sys entries, captured output.
#pragma once

#include <filesystem>
#include <string>

namespace nvj::cli {

// The file's bytes, or "" if it cannot be read.
std::string read_text_file(const std::filesystem::path& path);

// Writes `text` as the whole file (its folder must exist); a
// std::runtime_error naming the file if it is not all written.
void write_text_file(const std::filesystem::path& path, const std::string& text);

}  // namespace nvj::cli
