// What an experiment leaves in its output folder (results.json, table.md,
// plots): the files themselves, and plots drawn by gnuplot as PNG
// and SVG from a data file and a plotting script.
#pragma once

#include <filesystem>
#include <memory>
#include <string>

namespace nvj::cli {

// "12.35" for fixed(12.345, 2): numbers in tables and JSON.
std::string fixed(double value, int decimals);

// Writes `text` to dir/name (replacing it), throwing with the path on error.
void write_report_file(const std::filesystem::path& dir, const std::string& name, const std::string& text);

// Draws dir/NAME.png and dir/NAME.svg: `script` is gnuplot commands after
// the terminal and output are set (data files are named relative to dir).
// Throws with gnuplot's own message when it fails.
void plot(const std::filesystem::path& dir, const std::string& name, const std::string& script);

// Numbers of a JSON document (the control API's answers), by dotted path:
// figures.number("traffic.checkpoint.device_time_us").
class JsonFigures {
 public:
  explicit JsonFigures(const std::string& json);  // throws if it does not parse
  ~JsonFigures();
  double number(const std::string& path) const;  // throws naming the path if absent

 private:
  struct Tree;
  std::unique_ptr<Tree> tree_;
};

}  // namespace nvj::cli
