// SPDX-License-Identifier: BSD-3-Clause
// Regular expressions (ECMAScript syntax, as std::regex) for reading what
// other programs print: dd's and fs_mark's output, /proc/fs/jbd2/*/info,
// dpkg's fields, the guest's console. std::regex is compiled in
// text_pattern.cpp only: it is the costliest template of the standard
// library to compile, and the callers need only matches as strings.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace nvj::cli {

struct TextMatch {
  std::vector<std::string> groups;  // [0] the whole match, then each group ("" if it took no part)
  std::size_t end = 0;              // the offset in the text just past the match
};

class TextPattern {
 public:
  // `multiline`: ^ and $ also match at line breaks. Throws
  // std::invalid_argument naming the pattern when it is not a regular
  // expression.
  explicit TextPattern(const std::string& pattern, bool multiline = false);
  ~TextPattern();
  TextPattern(TextPattern&&) noexcept;
  TextPattern& operator=(TextPattern&&) noexcept;

  // The first match in `text`, or nullopt.
  std::optional<TextMatch> search(const std::string& text) const;
  // Every match in `text`, in order.
  std::vector<TextMatch> search_all(const std::string& text) const;
  // `text` with every match replaced by `with` (taken as it is).
  std::string replace(const std::string& text, const std::string& with) const;

 private:
  struct Compiled;
  std::unique_ptr<const Compiled> compiled_;
};

}  // namespace nvj::cli
