#include "fscore/record/fact_oracle.h"

#include <algorithm>
#include <cstdio>
#include <optional>


namespace fscore::record {

namespace {

std::string describe(std::uint64_t size, std::uint32_t crc) {
  char text[64];
  std::snprintf(text, sizeof text, "%llu bytes, crc32c %08x", static_cast<unsigned long long>(size), crc);
  return text;
}

std::string first_bytes(std::uint64_t n, std::uint32_t crc) {
  char text[80];
  std::snprintf(text, sizeof text, "the first %llu with crc32c %08x", static_cast<unsigned long long>(n), crc);
  return text;
}

}  // namespace

PathContent TreeFacts::look(const std::string& path, std::optional<std::uint64_t> prefix) const {
  PathContent s;
  const auto found = tree_.lookup(path);
  if (!found) return s;
  s.present = true;
  s.regular = (found->inode.mode & ext4::kModeTypeMask) == ext4::kModeRegular;
  if (!prefix || !s.regular) return s;
  s.size = found->inode.size;
  const std::optional<std::uint64_t> name =
      cache_ == nullptr ? std::nullopt : tree_.content_identity(found->inode, *prefix);
  if (name)
    if (const ContentCache::Entry* e = cache_->find(*name)) {
      s.crc_bytes = e->crc_bytes;
      s.crc = e->crc;
      return s;
    }
  const std::vector<std::uint8_t> bytes = tree_.contents(found->inode);
  s.size = bytes.size();
  s.crc_bytes = std::min<std::uint64_t>(*prefix, bytes.size());
  s.crc = fact_crc32c(bytes.data(), static_cast<std::size_t>(s.crc_bytes));
  if (name) cache_->put(*name, {s.crc_bytes, s.crc});
  return s;
}

const ContentCache::Entry* ContentCache::find(std::uint64_t name) const {
  const auto it = entries_.find(name);
  ++(it == entries_.end() ? misses_ : hits_);
  return it == entries_.end() ? nullptr : &it->second;
}

void ContentCache::put(std::uint64_t name, Entry entry) {
  if (entries_.size() >= (std::size_t{1} << 20)) entries_.clear();
  entries_[name] = entry;
}

std::vector<FactOracle::Moving>::iterator FactOracle::moving_with(const std::string& path) {
  return std::find_if(moving_.begin(), moving_.end(), [&](const Moving& m) {
    return std::find(m.names.begin(), m.names.end(), path) != m.names.end();
  });
}

void FactOracle::add(const Fact& f) {
  switch (f.kind) {
    case FactKind::file:
    case FactKind::prefix:
      if (auto m = moving_with(f.path); m != moving_.end()) moving_.erase(m);  // settled here
      at_[f.path] = Expect{Content{f.size, f.crc32c, f.kind == FactKind::file}};
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

std::vector<FactViolation> FactOracle::check(const FactView& fs) const {
  std::vector<FactViolation> out;
  const auto expected = [](const Expect& e) {
    if (!e.content) return std::string("present");
    if (e.content->exact) return describe(e.content->size, e.content->crc32c);
    return "at least " + std::to_string(e.content->size) + " bytes, " + first_bytes(e.content->size, e.content->crc32c);
  };
  const auto matches = [](const Expect& e, const PathContent& s) {
    if (!s.present) return false;
    if (!e.content) return true;
    const Content& c = *e.content;
    return s.regular && (c.exact ? s.size == c.size : s.size >= c.size) && s.crc_bytes == c.size && s.crc == c.crc32c;
  };
  const auto found = [](const Expect& e, const PathContent& s) {
    if (!s.present) return std::string("missing");
    if (!s.regular) return std::string("not a regular file");
    if (e.content && !e.content->exact && s.size > s.crc_bytes)
      return std::to_string(s.size) + " bytes, " + first_bytes(s.crc_bytes, s.crc);
    return describe(s.size, s.crc);
  };
  const auto want = [](const Expect& e) {
    return e.content ? std::optional<std::uint64_t>(e.content->exact ? ~std::uint64_t{0} : e.content->size)
                     : std::nullopt;
  };
  for (const auto& [path, e] : at_) {
    const PathContent s = fs.look(path, want(e));
    if (!matches(e, s)) out.push_back({path, expected(e), found(e, s)});
  }
  for (const Moving& m : moving_) {
    std::string names, seen;
    bool ok = false;
    for (const std::string& name : m.names) {
      const PathContent s = fs.look(name, want(m.expect));
      ok = ok || matches(m.expect, s);
      names += (names.empty() ? "" : " | ") + name;
      seen += (seen.empty() ? "" : " | ") + found(m.expect, s);
    }
    if (!ok) out.push_back({names, expected(m.expect) + " under one of the names", seen});
  }
  return out;
}

}  // namespace fscore::record
