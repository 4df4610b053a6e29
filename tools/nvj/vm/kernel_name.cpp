// SPDX-License-Identifier: BSD-3-Clause
#include "tools/nvj/vm/kernel_name.h"

#include <sstream>
#include <stdexcept>

namespace nvj::cli {
namespace {

bool lower_or_digit(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }

// Debian policy 5.6.1: at least two characters, lower case letters, digits,
// '+', '-' and '.', starting with a letter or digit.
bool package_name(const std::string& s) {
  if (s.size() < 2 || !lower_or_digit(s[0])) return false;
  for (const char c : s)
    if (!lower_or_digit(c) && c != '+' && c != '-' && c != '.') return false;
  return true;
}

// Debian policy 5.6.12: an optional epoch, then letters, digits and
// . + - ~ (and ':' after the epoch).
bool version_text(const std::string& s) {
  if (s.empty() || !(s[0] >= '0' && s[0] <= '9')) return false;
  for (const char c : s)
    if (!lower_or_digit(c) && !(c >= 'A' && c <= 'Z') && c != '.' && c != '+' && c != '-' && c != '~' && c != ':')
      return false;
  return true;
}

// A suite's codename or alias as the archive names it: "sid",
// "bookworm-backports", "unstable".
bool suite_name(const std::string& s) {
  if (s.empty() || !(s[0] >= 'a' && s[0] <= 'z')) return false;
  for (const char c : s)
    if (!lower_or_digit(c) && c != '-') return false;
  return true;
}

// A suite is one word; a package has a '-' (linux-image-...) or a '='.
bool looks_like_package(const std::string& s) { return s.rfind("linux-", 0) == 0 || s.find('=') != std::string::npos; }

}  // namespace

KernelName parse_kernel_name(const std::string& text) {
  KernelName k;
  k.text = text;
  if (text.empty()) throw std::invalid_argument("an empty kernel name");
  if (text.rfind(kDebianPrefix, 0) != 0) {
    k.path = text;
    return k;
  }
  const std::string rest = text.substr(std::string(kDebianPrefix).size());
  if (rest.empty())
    throw std::invalid_argument(text + ": which suite or package? (debian:sid, debian:linux-image-amd64=VERSION)");
  if (!looks_like_package(rest)) {
    if (!suite_name(rest))
      throw std::invalid_argument(text + ": '" + rest + "' is no suite name (bookworm, trixie, sid, experimental, ...)");
    k.kind = KernelName::Kind::debian_suite;
    k.suite = rest;
    return k;
  }
  k.kind = KernelName::Kind::debian_package;
  const std::size_t eq = rest.find('=');
  k.package = rest.substr(0, eq);
  if (!package_name(k.package)) throw std::invalid_argument(text + ": '" + k.package + "' is no package name");
  if (eq != std::string::npos) {
    k.version = rest.substr(eq + 1);
    if (k.version.empty()) throw std::invalid_argument(text + ": which version, after '='?");
    if (!version_text(k.version)) throw std::invalid_argument(text + ": '" + k.version + "' is no package version");
  }
  return k;
}

std::vector<KernelName> parse_kernel_names(const std::vector<std::string>& lists) {
  std::vector<KernelName> out;
  for (const std::string& list : lists) {
    std::stringstream in(list);
    std::vector<std::string> parts;
    for (std::string part; std::getline(in, part, ',');) parts.push_back(part);
    if (list.empty() || list.back() == ',') parts.push_back("");
    for (const std::string& part : parts) out.push_back(parse_kernel_name(part));
  }
  return out;
}

}  // namespace nvj::cli
