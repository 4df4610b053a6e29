// SPDX-License-Identifier: BSD-3-Clause
#include "crashlab/causes/signature.h"

#include <set>

namespace crashlab {

namespace {

// The error with every number (decimal, or hex after "0x") made '#'; the
// digits of a word (e2fsck, ext4, crc32c) are no number.
std::string without_numbers(const std::string& text) {
  const auto digit = [](char c) { return c >= '0' && c <= '9'; };
  const auto letter = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; };
  const auto hex = [&](char c) { return digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); };
  std::string out;
  for (std::size_t i = 0; i < text.size();) {
    if (!digit(text[i]) || (i > 0 && letter(text[i - 1]))) {
      out += text[i++];
      continue;
    }
    std::size_t j = i + 1;
    if (text[i] == '0' && j < text.size() && text[j] == 'x') {
      for (++j; j < text.size() && hex(text[j]);) ++j;
    } else {
      while (j < text.size() && digit(text[j])) ++j;
    }
    out += '#';
    i = j;
  }
  return out;
}

// `text` with every name in single quotes after `from` made '#'.
std::string without_quoted(const std::string& text, std::size_t from) {
  std::string out = text.substr(0, from);
  for (std::size_t i = from; i < text.size(); ++i) {
    out += text[i];
    if (text[i] != '\'') continue;
    const std::size_t close = text.find('\'', i + 1);
    if (close == std::string::npos) continue;
    out += "#'";
    i = close;
  }
  return out;
}

}  // namespace

std::string signature_of(const StateVerdict& v) {
  if (v.verdict == Verdict::pass) return "";
  std::string out = to_string(v.verdict);
  out += ": ";
  if (v.verdict == Verdict::unreadable || v.verdict == Verdict::needs_fsck) {
    // A checker's findings ("e2fsck -fn exits 4: first; second; ..."): the
    // first names the damage, the rest vary from state to state; so do the
    // names it quotes and the list after a finding's "differences:  ".
    std::string error = without_numbers(v.error);
    if (const std::size_t exits = error.find(" exits #: "); exits != std::string::npos) {
      if (const std::size_t next = error.find("; ", exits); next != std::string::npos) error.resize(next);
      if (const std::size_t list = error.find(":  ", exits + 9); list != std::string::npos) error.resize(list + 1);
      error = without_quoted(error, exits);
    }
    return out + error;
  }
  std::set<std::string> kinds;
  for (const FactViolation& f : v.violations) kinds.insert(f.what + " " + f.how);
  bool first = true;
  for (const std::string& k : kinds) {
    if (!first) out += ", ";
    out += k;
    first = false;
  }
  return out;
}

}  // namespace crashlab
