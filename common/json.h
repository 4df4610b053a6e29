// SPDX-License-Identifier: BSD-3-Clause
// JSON, written and read with one library (nlohmann-json, header-only, so
// the static workload program uses it too). Objects keep their keys in the
// order they were set: reports read top-down as they were written.
//
// Text is written and read only through to_json_text and parse_json, which
// live in json.cpp: the library's writer and parser are templates, compiled
// there once rather than in every file that writes or reads JSON.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>

namespace nvj {

using Json = nlohmann::ordered_json;

// One line of JSON. Text that is not valid UTF-8 (a file name is bytes) is
// written with U+FFFD in place of the bad bytes instead of failing.
std::string to_json_text(const Json& value, int indent = -1);

// Parses `text`; a std::runtime_error naming `what` and saying where the
// text stops being JSON.
Json parse_json(std::string_view text, const std::string& what);

// `value` rounded to `decimals` digits after the point: a measured figure
// written as a number without digits it does not have (0.9, not
// 0.90000000000000002).
double json_round(double value, int decimals);

}  // namespace nvj
