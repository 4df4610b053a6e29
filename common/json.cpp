// SPDX-License-Identifier: BSD-3-Clause
#include "common/json.h"

#include <cmath>
#include <stdexcept>

namespace nvj {

std::string to_json_text(const Json& value, int indent) {
  return value.dump(indent, ' ', false, Json::error_handler_t::replace);
}

Json parse_json(std::string_view text, const std::string& what) {
  try {
    return Json::parse(text);
  } catch (const Json::parse_error& e) {
    throw std::runtime_error(what + ": not JSON: " + e.what());
  }
}

double json_round(double value, int decimals) {
  const double scale = std::pow(10.0, decimals);
  return std::round(value * scale) / scale;
}

}  // namespace nvj
