#include "fscore/record/fact_oracle.h"

#include <algorithm>
#include <cstdio>


namespace fscore::record {

namespace {

std::string describe(std::uint64_t size, std::uint32_t crc) {
  char text[64];
  std::snprintf(text, sizeof text, "%llu bytes, crc32c %08x", static_cast<unsigned long long>(size), crc);
  return text;
}

// What a path holds in a filesystem: whether it is there, and a regular
// file's size and crc when they are asked for.
struct Seen {
  bool present = false;
  bool regular = false;
  std::uint64_t size = 0;
  std::uint32_t crc = 0;
};

Seen look(const ext4::TreeReader& fs, const std::string& path, bool want_content) {
  Seen s;
  const auto found = fs.lookup(path);
  if (!found) return s;
  s.present = true;
  s.regular = (found->inode.mode & ext4::kModeTypeMask) == ext4::kModeRegular;
  if (want_content && s.regular) {
    const std::vector<std::uint8_t> bytes = fs.contents(found->inode);
    s.size = bytes.size();
    s.crc = fact_crc32c(bytes.data(), bytes.size());
  }
  return s;
}

}  // namespace

std::vector<FactOracle::Moving>::iterator FactOracle::moving_with(const std::string& path) {
  return std::find_if(moving_.begin(), moving_.end(), [&](const Moving& m) {
    return std::find(m.names.begin(), m.names.end(), path) != m.names.end();
  });
}

void FactOracle::add(const Fact& f) {
  switch (f.kind) {
    case FactKind::file:
      if (auto m = moving_with(f.path); m != moving_.end()) moving_.erase(m);  // settled here
      at_[f.path] = Expect{Content{f.size, f.crc32c}};
      break;
    case FactKind::entry: {
      const std::string path = f.path == "." ? f.second : f.path + "/" + f.second;
      Expect e;
      if (auto it = at_.find(path); it != at_.end()) e = it->second;
      if (auto m = moving_with(path); m != moving_.end()) {  // the rename settles here
        if (!e.content) e = m->expect;
        moving_.erase(m);
      }
      at_[path] = e;
      break;
    }
    case FactKind::rename: {
      if (auto m = moving_with(f.path); m != moving_.end()) {  // renamed again before it settled
        if (std::find(m->names.begin(), m->names.end(), f.second) == m->names.end()) m->names.push_back(f.second);
        at_.erase(f.second);
        break;
      }
      Moving m{{f.path, f.second}, Expect{}};
      if (auto it = at_.find(f.path); it != at_.end()) m.expect = it->second;
      at_.erase(f.path);
      at_.erase(f.second);  // whatever was at TO is being replaced
      moving_.push_back(std::move(m));
      break;
    }
    case FactKind::rewrite:
      at_[f.path] = Expect{};
      break;
    case FactKind::remove:
      at_.erase(f.path);
      if (auto m = moving_with(f.path); m != moving_.end()) moving_.erase(m);
      break;
  }
}

std::vector<FactViolation> FactOracle::check(const ext4::TreeReader& fs) const {
  std::vector<FactViolation> out;
  const auto expected = [](const Expect& e) {
    return e.content ? describe(e.content->size, e.content->crc32c) : std::string("present");
  };
  const auto matches = [](const Expect& e, const Seen& s) {
    return s.present && (!e.content || (s.regular && s.size == e.content->size && s.crc == e.content->crc32c));
  };
  const auto found = [](const Seen& s) {
    if (!s.present) return std::string("missing");
    if (!s.regular) return std::string("not a regular file");
    return describe(s.size, s.crc);
  };
  for (const auto& [path, e] : at_) {
    const Seen s = look(fs, path, e.content.has_value());
    if (!matches(e, s)) out.push_back({path, expected(e), found(s)});
  }
  for (const Moving& m : moving_) {
    std::string names, seen;
    bool ok = false;
    for (const std::string& name : m.names) {
      const Seen s = look(fs, name, m.expect.content.has_value());
      ok = ok || matches(m.expect, s);
      names += (names.empty() ? "" : " | ") + name;
      seen += (seen.empty() ? "" : " | ") + found(s);
    }
    if (!ok) out.push_back({names, expected(m.expect) + " under one of the names", seen});
  }
  return out;
}

}  // namespace fscore::record
