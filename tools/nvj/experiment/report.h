// SPDX-License-Identifier: BSD-3-Clause
// What an experiment leaves in its output folder (results.json, table.md,
// plots): the files themselves, and plots drawn by gnuplot as PNG
// and SVG from a data file and a plotting script.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

#include "common/json.h"

namespace nvj::cli {

// "12.35" for fixed(12.345, 2): numbers in tables.
std::string fixed(double value, int decimals);

// `text` as one cell of a Markdown table: '|' escaped, each line end a
// space (a cell holds one line), nothing dropped.
std::string markdown_cell(const std::string& text);

// Writes `text` to dir/name (replacing it), throwing with the path on error.
void write_report_file(const std::filesystem::path& dir, const std::string& name, const std::string& text);

// Writes `document` to dir/name as one line of JSON.
void write_report_json(const std::filesystem::path& dir, const std::string& name, const Json& document);

// Draws dir/NAME.png and dir/NAME.svg: `script` is gnuplot commands after
// the terminal and output are set (data files are named relative to dir).
// Throws with gnuplot's own message when it fails.
void plot(const std::filesystem::path& dir, const std::string& name, const std::string& script);

// Numbers of a JSON document (the control API's answers), by dotted path:
// figures.number("traffic.checkpoint.device_time_us"). `what` names the
// document in errors ("GET /journal").
class JsonFigures {
 public:
  JsonFigures(const std::string& text, std::string what);  // throws if it is not JSON
  // Throw naming the path when it is absent or not a number (count: not a
  // whole number from 0 up).
  double number(const std::string& path) const;
  std::uint64_t count(const std::string& path) const;

 private:
  const Json& at(const std::string& path) const;
  std::string what_;
  Json root_;
};

}  // namespace nvj::cli
