// SPDX-License-Identifier: BSD-3-Clause
#include "tools/nvj/experiment/report.h"

#include <algorithm>
#include <cstdio>
#include <stdexcept>
#include <utility>

#include "tools/nvj/host/files/text_file.h"
#include "tools/nvj/host/processes/process.h"

namespace nvj::cli {
namespace fs = std::filesystem;

std::string fixed(double value, int decimals) {
  char b[64];
  std::snprintf(b, sizeof b, "%.*f", decimals, value);
  return b;
}

std::string markdown_cell(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    if (c == '|')
      out += "\\|";
    else
      out += c == '\n' || c == '\r' ? ' ' : c;
  }
  return out;
}

void write_report_file(const fs::path& dir, const std::string& name, const std::string& text) {
  fs::create_directories(dir);
  write_text_file(dir / name, text);
}

void plot(const fs::path& dir, const std::string& name, const std::string& script) {
  for (const auto& [terminal, ext] : {std::pair{"pngcairo noenhanced size 960,600 font 'sans,11'", "png"},
                                       std::pair{"svg noenhanced size 960,600 dynamic font 'sans,11'", "svg"}}) {
    const std::string file = name + "." + ext;
    const std::string gp = file + ".gp";  // one script per picture, to redraw either
    write_report_file(dir, gp, std::string("set terminal ") + terminal + "\nset output '" + file + "'\n" + script + "\n");
    const auto r = run({"sh", "-c", "cd \"$0\" && gnuplot \"$1\"", dir.string(), gp});
    if (r.status != 0) throw std::runtime_error("gnuplot " + (dir / gp).string() + ": " + r.output);
  }
}

void write_report_json(const fs::path& dir, const std::string& name, const Json& document) {
  write_report_file(dir, name, to_json_text(document) + "\n");
}

JsonFigures::JsonFigures(const std::string& text, std::string what)
    : what_(std::move(what)), root_(parse_json(text, what_)) {}

const Json& JsonFigures::at(const std::string& path) const {
  const Json* node = &root_;
  for (std::size_t from = 0; from <= path.size();) {
    const std::size_t dot = std::min(path.find('.', from), path.size());
    const std::string key = path.substr(from, dot - from);
    if (!node->is_object() || !node->contains(key))
      throw std::runtime_error(what_ + ": no " + path + " in the answer (" + key + " is missing)");
    node = &(*node)[key];
    from = dot + 1;
  }
  return *node;
}

double JsonFigures::number(const std::string& path) const {
  const Json& v = at(path);
  if (!v.is_number()) throw std::runtime_error(what_ + ": " + path + " is not a number: " + to_json_text(v));
  return v.get<double>();
}

std::uint64_t JsonFigures::count(const std::string& path) const {
  const Json& v = at(path);
  if (!v.is_number_unsigned())
    throw std::runtime_error(what_ + ": " + path + " is not a whole number from 0 up: " + to_json_text(v));
  return v.get<std::uint64_t>();
}

}  // namespace nvj::cli
