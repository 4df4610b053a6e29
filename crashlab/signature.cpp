// SPDX-License-Identifier: BSD-3-Clause
#include "crashlab/signature.h"

#include <set>

namespace crashlab {

namespace {

// The error with every number (decimal, or hex after "0x") made '#'.
std::string without_numbers(const std::string& text) {
  const auto digit = [](char c) { return c >= '0' && c <= '9'; };
  const auto hex = [&](char c) { return digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); };
  std::string out;
  for (std::size_t i = 0; i < text.size();) {
    if (!digit(text[i])) {
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

}  // namespace

std::string signature_of(const StateVerdict& v) {
  if (v.verdict == Verdict::pass) return "";
  std::string out = to_string(v.verdict);
  out += ": ";
  if (v.verdict == Verdict::unreadable || v.verdict == Verdict::needs_fsck) return out + without_numbers(v.error);
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
