// SPDX-License-Identifier: BSD-3-Clause
#include "tools/nvj/host/files/text_pattern.h"

#include <regex>
#include <stdexcept>

namespace nvj::cli {

struct TextPattern::Compiled {
  std::regex regex;
};

namespace {

TextMatch to_match(const std::smatch& m) {
  TextMatch out;
  out.groups.reserve(m.size());
  for (const auto& group : m) out.groups.push_back(group.str());
  out.end = static_cast<std::size_t>(m.position(0) + m.length(0));
  return out;
}

}  // namespace

TextPattern::TextPattern(const std::string& pattern, bool multiline) {
  auto flags = std::regex::ECMAScript;
  if (multiline) flags |= std::regex::multiline;
  try {
    compiled_ = std::make_unique<const Compiled>(Compiled{std::regex(pattern, flags)});
  } catch (const std::regex_error& e) {
    throw std::invalid_argument("not a regular expression: " + pattern + " (" + e.what() + ")");
  }
}

TextPattern::~TextPattern() = default;
TextPattern::TextPattern(TextPattern&&) noexcept = default;
TextPattern& TextPattern::operator=(TextPattern&&) noexcept = default;

std::optional<TextMatch> TextPattern::search(const std::string& text) const {
  std::smatch m;
  if (!std::regex_search(text, m, compiled_->regex)) return std::nullopt;
  return to_match(m);
}

std::vector<TextMatch> TextPattern::search_all(const std::string& text) const {
  std::vector<TextMatch> out;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), compiled_->regex); it != std::sregex_iterator(); ++it)
    out.push_back(to_match(*it));
  return out;
}

std::string TextPattern::replace(const std::string& text, const std::string& with) const {
  // std::regex_replace reads $1, $& and $$ in the replacement: $ doubled is a $.
  std::string format;
  for (const char c : with) {
    if (c == '$') format += '$';
    format += c;
  }
  return std::regex_replace(text, compiled_->regex, format);
}

}  // namespace nvj::cli
