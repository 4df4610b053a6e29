// SPDX-License-Identifier: BSD-3-Clause
#include "server/model/model_spec.h"

#include <charconv>
#include <stdexcept>

#include "common/size.h"

namespace nvj {

ModelSpec ModelSpec::parse(std::string_view text) {
  ModelSpec spec;
  spec.text = std::string(text);
  const std::size_t colon = text.find(':');
  spec.name = std::string(text.substr(0, colon));
  if (spec.name.empty()) throw std::invalid_argument("no model name (expected NAME[:KEY=VALUE,...])");
  if (colon == std::string_view::npos) return spec;
  std::string_view rest = text.substr(colon + 1);
  while (!rest.empty()) {
    const std::size_t comma = rest.find(',');
    const std::string_view item = rest.substr(0, comma);
    const std::size_t eq = item.find('=');
    if (eq == std::string_view::npos || eq == 0)
      throw std::invalid_argument("'" + std::string(item) + "' is not KEY=VALUE");
    const std::string key(item.substr(0, eq));
    if (!spec.params.emplace(key, std::string(item.substr(eq + 1))).second)
      throw std::invalid_argument("'" + key + "' is given twice");
    if (comma == std::string_view::npos) break;
    rest = rest.substr(comma + 1);
    if (rest.empty()) throw std::invalid_argument("a trailing ','");
  }
  return spec;
}

const std::string* ModelParams::take(std::string_view key) {
  known_.emplace(key);
  const auto it = spec_.params.find(key);
  return it == spec_.params.end() ? nullptr : &it->second;
}

void ModelParams::bad(std::string_view key, const std::string& why) const {
  throw std::invalid_argument(spec_.name + " " + std::string(key) + "=" + spec_.params.find(key)->second + ": " + why);
}

Nanos ModelParams::duration(std::string_view key, Nanos fallback) {
  const std::string* v = take(key);
  if (v == nullptr) return fallback;
  try {
    return parse_duration(*v);
  } catch (const std::invalid_argument& e) {
    bad(key, e.what());
  }
}

std::uint64_t ModelParams::size(std::string_view key, std::uint64_t fallback) {
  const std::string* v = take(key);
  if (v == nullptr) return fallback;
  try {
    return parse_size(*v);
  } catch (const std::invalid_argument& e) {
    bad(key, e.what());
  }
}

std::uint64_t ModelParams::atomic_unit(std::uint64_t fallback) {
  const std::uint64_t unit = size("atomic", fallback);
  if (unit == 0 || unit % 512 != 0 || unit > (1u << 20))
    bad("atomic", "whole 512-byte sectors (512, 4096, ...) up to 1M, not " + std::to_string(unit) + " bytes");
  return unit;
}

std::uint64_t ModelParams::count(std::string_view key, std::uint64_t fallback, std::uint64_t min, std::uint64_t max) {
  const std::string* v = take(key);
  if (v == nullptr) return fallback;
  std::uint64_t n = 0;
  const auto [end, ec] = std::from_chars(v->data(), v->data() + v->size(), n);
  if (ec != std::errc() || end != v->data() + v->size() || n < min || n > max)
    bad(key, "expected a whole number from " + std::to_string(min) + " to " + std::to_string(max));
  return n;
}

bool ModelParams::on_off(std::string_view key, bool fallback) {
  const std::string* v = take(key);
  if (v == nullptr) return fallback;
  if (*v == "on") return true;
  if (*v == "off") return false;
  bad(key, "expected on or off");
}

void ModelParams::finish() const {
  for (const auto& [key, value] : spec_.params) {
    if (known_.contains(key)) continue;
    std::string list;
    for (const auto& k : known_) list += (list.empty() ? "" : ", ") + k;
    throw std::invalid_argument("unknown " + spec_.name + " parameter '" + key + "' (it takes " + list + ")");
  }
}

}  // namespace nvj
