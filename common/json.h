// JSON, written and read with one library (nlohmann-json, header-only, so
// the static workload program uses it too). Objects keep their keys in the
// order they were set: reports read top-down as they were written.
#pragma once

#include <nlohmann/json.hpp>

#include <cmath>
#include <stdexcept>
#include <string>
#include <string_view>

namespace nvj {

using Json = nlohmann::ordered_json;

// One line of JSON. Text that is not valid UTF-8 (a file name is bytes) is
// written with U+FFFD in place of the bad bytes instead of failing.
inline std::string to_json_text(const Json& value, int indent = -1) {
  return value.dump(indent, ' ', false, Json::error_handler_t::replace);
}

// Parses `text`; a std::runtime_error naming `what` and saying where the
// text stops being JSON.
inline Json parse_json(std::string_view text, const std::string& what) {
  try {
    return Json::parse(text);
  } catch (const Json::parse_error& e) {
    throw std::runtime_error(what + ": not JSON: " + e.what());
  }
}

// `value` rounded to `decimals` digits after the point: a measured figure
// written as a number without digits it does not have (0.9, not
// 0.90000000000000002).
inline double json_round(double value, int decimals) {
  const double scale = std::pow(10.0, decimals);
  return std::round(value * scale) / scale;
}

}  // namespace nvj
