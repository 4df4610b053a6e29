// SPDX-License-Identifier: BSD-3-Clause
#include "crashlab/facts/fact.h"

#include <algorithm>
#include <cstdio>
#include <vector>

#include "fscore/crc32c.h"

namespace crashlab {

namespace {

constexpr std::string_view kPrefix = "fact ";

bool plain(unsigned char c) { return c > ' ' && c < 0x7F && c != '%'; }

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

// Empty, absolute, or with an empty, "." or ".." component: what is wrong,
// or empty when the path is fine. "." alone (the root) only where allowed.
std::string path_problem(std::string_view path, bool root_allowed) {
  if (path.empty()) return "an empty path";
  if (path.find('\0') != std::string_view::npos) return "a path with a NUL byte";
  if (path == ".") return root_allowed ? "" : "the root itself where a file's path belongs";
  if (path.front() == '/') return "an absolute path (facts name paths from the filesystem's root, without '/')";
  std::size_t start = 0;
  for (;;) {
    const std::size_t end = path.find('/', start);
    const std::string_view part = path.substr(start, end == std::string_view::npos ? end : end - start);
    if (part.empty() || part == "." || part == "..") return "a path with an empty, '.' or '..' component";
    if (end == std::string_view::npos) return "";
    start = end + 1;
  }
}

std::string escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if (plain(c)) {
      out += ch;
    } else {
      char hex[4];
      std::snprintf(hex, sizeof hex, "%%%02X", c);
      out += hex;
    }
  }
  return out;
}

[[noreturn]] void fail(std::string_view label, const std::string& what) {
  throw FactError("fact: " + what + " in \"" + std::string(label.substr(0, 200)) + "\"");
}

std::string unescape(std::string_view label, std::string_view word) {
  std::string out;
  for (std::size_t i = 0; i < word.size(); ++i) {
    if (word[i] != '%') {
      out += word[i];
      continue;
    }
    const int hi = i + 1 < word.size() ? hex_value(word[i + 1]) : -1;
    const int lo = i + 2 < word.size() ? hex_value(word[i + 2]) : -1;
    if (hi < 0 || lo < 0) fail(label, "a '%' not followed by two hex digits");
    out += static_cast<char>(hi * 16 + lo);
    i += 2;
  }
  return out;
}

std::uint64_t number(std::string_view label, std::string_view word, const char* what) {
  if (word.empty() || word.size() > 20) fail(label, std::string("a bad ") + what);
  std::uint64_t n = 0;
  for (const char c : word) {
    if (c < '0' || c > '9') fail(label, std::string("a bad ") + what + " '" + std::string(word) + "'");
    const std::uint64_t digit = static_cast<std::uint64_t>(c - '0');
    if (n > (UINT64_MAX - digit) / 10) fail(label, std::string("a ") + what + " too large");
    n = n * 10 + digit;
  }
  return n;
}

std::uint32_t crc_word(std::string_view label, std::string_view word) {
  if (word.size() != 8) fail(label, "a crc32c of " + std::to_string(word.size()) + " characters (8 hex digits)");
  std::uint32_t v = 0;
  for (const char c : word) {
    const int d = hex_value(c);
    if (d < 0) fail(label, "a crc32c that is not hex '" + std::string(word) + "'");
    v = v << 4 | static_cast<std::uint32_t>(d);
  }
  return v;
}

}  // namespace

std::uint32_t fact_crc32c(const void* data, std::size_t n) { return ~fscore::crc32c(~0u, data, n); }

std::vector<std::uint32_t> fact_block_crcs(const void* data, std::size_t n, std::size_t unit, bool partial) {
  const auto* bytes = static_cast<const unsigned char*>(data);
  std::vector<std::uint32_t> out;
  if (unit == 0) return out;
  for (std::size_t at = 0; at + unit <= n; at += unit) out.push_back(fact_crc32c(bytes + at, unit));
  if (const std::size_t rest = n % unit; partial && rest != 0) {
    std::vector<unsigned char> last(unit, 0);
    std::copy(bytes + (n - rest), bytes + n, last.begin());
    out.push_back(fact_crc32c(last.data(), last.size()));
  }
  return out;
}

std::uint32_t fact_zero_block_crc(std::size_t unit) {
  const std::vector<unsigned char> zeroes(unit, 0);
  return fact_crc32c(zeroes.data(), zeroes.size());
}

const char* to_string(FactKind kind) {
  switch (kind) {
    case FactKind::file: return "file";
    case FactKind::entry: return "entry";
    case FactKind::rename: return "rename";
    case FactKind::rewrite: return "rewrite";
    case FactKind::remove: return "remove";
    case FactKind::prefix: return "prefix";
    case FactKind::absent: return "absent";
    case FactKind::mode: return "mode";
    case FactKind::nlink: return "nlink";
    case FactKind::symlink: return "symlink";
    case FactKind::xattr: return "xattr";
    case FactKind::noxattr: return "noxattr";
    case FactKind::nostale: return "nostale";
  }
  return "unknown";
}

std::string format_fact(const Fact& fact) {
  const bool is_entry = fact.kind == FactKind::entry;
  if (const std::string p = path_problem(fact.path, is_entry); !p.empty())
    throw FactError("fact " + std::string(to_string(fact.kind)) + ": " + p + ": \"" + fact.path + "\"");
  std::string label(kPrefix);
  label += to_string(fact.kind);
  label += ' ';
  label += escape(fact.path);
  switch (fact.kind) {
    case FactKind::file:
    case FactKind::prefix: {
      char crc[9];
      std::snprintf(crc, sizeof crc, "%08x", fact.crc32c);
      label += " size " + std::to_string(fact.size) + " crc32c " + crc;
      break;
    }
    case FactKind::entry:
      if (fact.second.empty() || fact.second == "." || fact.second == ".." ||
          fact.second.find_first_of(std::string_view("/\0", 2)) != std::string::npos)
        throw FactError("fact entry: \"" + fact.second + "\" is not an entry's name");
      label += ' ' + escape(fact.second);
      break;
    case FactKind::rename:
      if (const std::string p = path_problem(fact.second, false); !p.empty())
        throw FactError("fact rename: " + p + ": \"" + fact.second + "\"");
      label += ' ' + escape(fact.second);
      break;
    case FactKind::rewrite:
    case FactKind::remove:
    case FactKind::absent:
      break;
    case FactKind::mode: {
      if (fact.second != "file" && fact.second != "dir" && fact.second != "symlink")
        throw FactError("fact mode: \"" + fact.second + "\" is not a type (file, dir, symlink)");
      if (fact.size > 07777) throw FactError("fact mode: " + std::to_string(fact.size) + " is more than permission bits");
      char octal[8];
      std::snprintf(octal, sizeof octal, "%04o", static_cast<unsigned>(fact.size));
      label += ' ' + fact.second + ' ' + octal;
      break;
    }
    case FactKind::nlink:
      label += ' ' + std::to_string(fact.size);
      break;
    case FactKind::nostale:
      if (fact.size == 0 || fact.size % 512 != 0 || fact.size > kMaxFactUnit)
        throw FactError("fact nostale: a unit of " + std::to_string(fact.size) + " bytes (a multiple of 512 up to 65536)");
      label += ' ' + std::to_string(fact.size);
      for (const std::vector<std::uint32_t>& block : fact.blocks) {
        label += block.empty() ? " zero" : " ";
        for (std::size_t i = 0; i < block.size(); ++i) {
          char crc[10];
          std::snprintf(crc, sizeof crc, "%s%08x", i == 0 ? "" : "/", block[i]);
          label += crc;
        }
      }
      break;
    case FactKind::symlink:
      if (fact.second.empty() || fact.second.find('\0') != std::string::npos)
        throw FactError("fact symlink: an empty target, or one with a NUL byte");
      label += ' ' + escape(fact.second);
      break;
    case FactKind::xattr:
    case FactKind::noxattr: {
      if (fact.second.empty() || fact.second.find('\0') != std::string::npos)
        throw FactError("fact " + std::string(to_string(fact.kind)) + ": an empty attribute name, or one with a NUL byte");
      label += ' ' + escape(fact.second);
      if (fact.kind == FactKind::noxattr) break;
      char crc[9];
      std::snprintf(crc, sizeof crc, "%08x", fact.crc32c);
      label += " size " + std::to_string(fact.size) + " crc32c " + crc;
      break;
    }
  }
  return label;
}

namespace {

// The words after "fact ", each separated from the next by one space.
std::vector<std::string_view> label_words(std::string_view label) {
  std::vector<std::string_view> words;
  for (std::size_t start = kPrefix.size();;) {
    const std::size_t end = label.find(' ', start);
    words.push_back(label.substr(start, end == std::string_view::npos ? end : end - start));
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  for (const std::string_view w : words)
    if (w.empty()) fail(label, "an empty word (words are separated by one space)");
  return words;
}

// The kind named `name` into `kind`, and how many words a fact of it has
// (0: two words or more).
std::size_t kind_named(std::string_view label, std::string_view name, FactKind& kind) {
  // Each kind, named as to_string names it, and its words, the name
  // included: file PATH size BYTES crc32c HEX, and so on (crashlab/facts/fact.h).
  struct Shape {
    FactKind kind;
    std::size_t words;
  };
  constexpr Shape kShapes[] = {{FactKind::file, 6},    {FactKind::prefix, 6}, {FactKind::entry, 3},
                               {FactKind::rename, 3},  {FactKind::rewrite, 2}, {FactKind::remove, 2},
                               {FactKind::absent, 2},  {FactKind::mode, 4},    {FactKind::nlink, 3},
                               {FactKind::symlink, 3}, {FactKind::xattr, 7},   {FactKind::noxattr, 3},
                               {FactKind::nostale, 0}};  // 0: two words or more
  std::size_t want = 0;
  for (const Shape& shape : kShapes)
    if (name == to_string(shape.kind)) {
      kind = shape.kind;
      want = shape.words;
    }
  bool known = false;
  for (const Shape& shape : kShapes) known = known || name == to_string(shape.kind);
  if (!known) fail(label, "an unknown kind '" + std::string(name) + "' (file, prefix, entry, rename, rewrite, remove, absent, mode, nlink, symlink, xattr, noxattr, nostale)");
  return want;
}

// A nostale fact's unit and blocks, from its third word on.
void parse_nostale(std::string_view label, const std::vector<std::string_view>& words, Fact& f) {
  f.size = number(label, words[2], "unit");
  if (f.size == 0 || f.size % 512 != 0 || f.size > kMaxFactUnit)
    fail(label, "a unit of " + std::string(words[2]) + " bytes (a multiple of 512 up to 65536)");
  for (std::size_t i = 3; i < words.size(); ++i) {
    f.blocks.emplace_back();
    if (words[i] == "zero") continue;
    for (std::size_t start = 0;;) {
      const std::size_t end = words[i].find('/', start);
      f.blocks.back().push_back(crc_word(label, words[i].substr(start, end == std::string_view::npos ? end : end - start)));
      if (end == std::string_view::npos) break;
      start = end + 1;
    }
  }
}

// The words after the path, as the fact's kind reads them.
void parse_fields(std::string_view label, const std::vector<std::string_view>& words, Fact& f) {
  const std::string_view kind = words[0];
  if (f.kind == FactKind::file || f.kind == FactKind::prefix) {
    if (words[2] != "size" || words[4] != "crc32c")
      fail(label, "a " + std::string(kind) + " fact is '" + std::string(kind) + " PATH size BYTES crc32c HEX'");
    f.size = number(label, words[3], "size");
    f.crc32c = crc_word(label, words[5]);
  } else if (f.kind == FactKind::entry) {
    f.second = unescape(label, words[2]);
    if (f.second == "." || f.second == ".." || f.second.find_first_of(std::string_view("/\0", 2)) != std::string::npos)
      fail(label, "an entry's name that is '.', '..' or holds '/' or NUL");
  } else if (f.kind == FactKind::rename) {
    f.second = unescape(label, words[2]);
    if (const std::string p = path_problem(f.second, false); !p.empty()) fail(label, p);
  } else if (f.kind == FactKind::mode) {
    f.second = std::string(words[2]);
    if (f.second != "file" && f.second != "dir" && f.second != "symlink")
      fail(label, "a type '" + f.second + "' (file, dir, symlink)");
    if (words[3].size() != 4 || words[3].find_first_not_of("01234567") != std::string_view::npos)
      fail(label, "a mode '" + std::string(words[3]) + "' (4 octal digits)");
    for (const char c : words[3]) f.size = f.size * 8 + static_cast<std::uint64_t>(c - '0');
  } else if (f.kind == FactKind::nlink) {
    f.size = number(label, words[2], "link count");
  } else if (f.kind == FactKind::nostale) {
    parse_nostale(label, words, f);
  } else if (f.kind == FactKind::symlink || f.kind == FactKind::xattr || f.kind == FactKind::noxattr) {
    f.second = unescape(label, words[2]);
    if (f.second.find('\0') != std::string::npos) fail(label, "a NUL byte in " + std::string(kind) + "'s second word");
    if (f.kind == FactKind::xattr) {
      if (words[3] != "size" || words[5] != "crc32c") fail(label, "an xattr fact is 'xattr PATH NAME size BYTES crc32c HEX'");
      f.size = number(label, words[4], "size");
      f.crc32c = crc_word(label, words[6]);
    }
  }
}

}  // namespace

std::optional<Fact> parse_fact(std::string_view label) {
  if (label.substr(0, kPrefix.size()) != kPrefix) return std::nullopt;
  const std::vector<std::string_view> words = label_words(label);
  Fact f;
  const std::string_view kind = words[0];
  const std::size_t want = kind_named(label, kind, f.kind);
  if (want == 0 && words.size() < 3) fail(label, "a nostale fact is 'nostale PATH UNIT [BLOCK]...'");
  if (want != 0 && words.size() != want)
    fail(label, std::to_string(words.size() - 1) + " words after '" + std::string(kind) + "', not " +
                    std::to_string(want - 1));
  f.path = unescape(label, words[1]);
  if (const std::string p = path_problem(f.path, f.kind == FactKind::entry); !p.empty()) fail(label, p);
  parse_fields(label, words, f);
  return f;
}

}  // namespace crashlab
