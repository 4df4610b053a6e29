#include "tools/nvj/experiment/report.h"

#include <boost/property_tree/json_parser.hpp>
#include <boost/property_tree/ptree.hpp>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "tools/nvj/host/process.h"

namespace nvj::cli {
namespace fs = std::filesystem;

std::string fixed(double value, int decimals) {
  char b[64];
  std::snprintf(b, sizeof b, "%.*f", decimals, value);
  return b;
}

void write_report_file(const fs::path& dir, const std::string& name, const std::string& text) {
  fs::create_directories(dir);
  const fs::path path = dir / name;
  std::ofstream out(path, std::ios::trunc);
  out << text;
  out.close();
  if (!out) throw std::runtime_error("cannot write " + path.string());
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

struct JsonFigures::Tree {
  boost::property_tree::ptree root;
};

JsonFigures::JsonFigures(const std::string& json) : tree_(std::make_unique<Tree>()) {
  std::istringstream in(json);
  try {
    boost::property_tree::read_json(in, tree_->root);
  } catch (const std::exception& e) {
    throw std::runtime_error(std::string("the server's answer is not JSON: ") + e.what());
  }
}

JsonFigures::~JsonFigures() = default;

double JsonFigures::number(const std::string& path) const {
  try {
    return tree_->root.get<double>(path);
  } catch (const std::exception& e) {
    throw std::runtime_error("no number at " + path + " in the server's answer: " + e.what());
  }
}

}  // namespace nvj::cli
