// SPDX-License-Identifier: BSD-3-Clause
#include "crashlab/facts/fact_checker.h"

#include <algorithm>
#include <cstdio>
#include <optional>

#include "fscore/crc32c.h"
#include "fscore/ext4/features.h"
#include "fscore/ext4/xattr.h"


namespace crashlab {

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
  s.regular = (found->inode.mode & fscore::ext4::kModeTypeMask) == fscore::ext4::kModeRegular;
  if (!prefix || !s.regular) return s;
  if (cache_ == nullptr) {
    const std::vector<std::uint8_t> bytes = tree_.contents(*found);
    s.size = bytes.size();
    s.crc_bytes = std::min<std::uint64_t>(*prefix, bytes.size());
    s.crc = fact_crc32c(bytes.data(), static_cast<std::size_t>(s.crc_bytes));
    return s;
  }
  s.size = found->inode.size;
  s.crc_bytes = std::min(*prefix, s.size);
  s.crc = chunked_crc(*found, s.crc_bytes);
  return s;
}

std::optional<std::vector<std::uint32_t>> TreeFacts::blocks(const std::string& path, std::size_t unit) const {
  const auto found = tree_.lookup(path);
  if (!found || (found->inode.mode & fscore::ext4::kModeTypeMask) != fscore::ext4::kModeRegular) return std::nullopt;
  const std::vector<std::uint8_t> bytes = tree_.contents(*found);
  return fact_block_crcs(bytes.data(), bytes.size(), unit, false);
}

PathMeta TreeFacts::meta(const std::string& path, bool xattrs) const {
  namespace e4 = fscore::ext4;
  PathMeta m;
  const auto found = tree_.lookup(path);
  if (!found) return m;
  m.present = true;
  const std::uint16_t type = found->inode.mode & e4::kModeTypeMask;
  m.type = type == e4::kModeRegular ? "file" : type == e4::kModeDir ? "dir" : type == e4::kModeSymlink ? "symlink" : "other";
  m.mode = found->inode.mode & 07777u;
  m.nlink = found->inode.links;
  if (m.type == "symlink") {
    const std::uint64_t size = found->inode.size;
    if (size < found->inode.block.size() && (found->inode.flags & e4::kExtentsFl) == 0) {
      m.target.assign(reinterpret_cast<const char*>(found->inode.block.data()), static_cast<std::size_t>(size));
    } else {
      const std::vector<std::uint8_t> bytes = tree_.contents(*found, 4096);
      m.target.assign(bytes.begin(), bytes.end());
    }
  }
  if (xattrs)
    for (const auto& [name, value] : e4::read_xattrs(tree_.source(), tree_.info(), found->ino))
      m.xattrs[name] = {value.size(), fact_crc32c(value.data(), value.size())};
  return m;
}

// The crc of a file's first `want` bytes, chunk by chunk: a chunk is named
// by where its parts lie and the source's identity() of the blocks under
// them, and read only when the cache does not know its name.
std::uint32_t TreeFacts::chunked_crc(const fscore::ext4::TreeReader::Found& file, std::uint64_t want) const {
  constexpr std::uint64_t kChunk = 256 * 1024;
  const std::uint64_t bs = tree_.info().block_size;
  const std::vector<fscore::ext4::Extent> extents = tree_.extents(file, want);
  const fscore::BlockSource& source = tree_.source();
  std::uint32_t crc = 0;  // of nothing
  std::vector<std::uint8_t> buffer;
  ContentCache::Key name;
  std::size_t first = 0;  // the first extent that may reach the chunk
  for (std::uint64_t start = 0; start < want; start += kChunk) {
    const std::uint64_t end = std::min(want, start + kChunk);
    // The parts of the chunk extents hold: [a, b) of the file at device byte d.
    struct Part {
      std::uint64_t a, b, d;
    };
    std::vector<Part> parts;
    while (first < extents.size() && (extents[first].logical + std::uint64_t{extents[first].length}) * bs <= start) ++first;
    for (std::size_t i = first; i < extents.size() && extents[i].logical * bs < end; ++i) {
      const std::uint64_t from = extents[i].logical * bs, to = from + std::uint64_t{extents[i].length} * bs;
      const std::uint64_t a = std::max(start, from), b = std::min(end, to);
      if (a < b) parts.push_back({a, b, extents[i].physical * bs + (a - from)});
    }
    name.assign({end - start, parts.size()});
    bool named = true;
    for (const Part& p : parts) {
      name.push_back(p.a - start);
      name.push_back(p.b - p.a);
      const std::size_t words_at = name.size();
      name.push_back(0);
      named = source.identity(p.d, p.b - p.a, name);
      if (!named) break;
      name[words_at] = name.size() - words_at - 1;  // how many words the source gave
    }
    std::uint32_t chunk = 0;
    const ContentCache::Entry* known = named ? cache_->find(name) : nullptr;
    if (known != nullptr) {
      chunk = known->crc;
    } else {
      buffer.assign(static_cast<std::size_t>(end - start), 0);
      for (const Part& p : parts)
        source.read(p.d, std::span<std::uint8_t>(buffer.data() + (p.a - start), static_cast<std::size_t>(p.b - p.a)));
      chunk = fact_crc32c(buffer.data(), buffer.size());
      if (named) cache_->put(name, {end - start, chunk});
    }
    crc = fscore::crc32c_combine(crc, chunk, end - start);
  }
  return crc;
}

const ContentCache::Entry* ContentCache::find(const Key& key) const {
  const auto it = entries_.find(key);
  ++(it == entries_.end() ? misses_ : hits_);
  return it == entries_.end() ? nullptr : &it->second;
}

void ContentCache::put(const Key& key, Entry entry) {
  if (words_ + key.size() > (std::uint64_t{8} << 20)) {
    entries_.clear();
    words_ = 0;
  }
  if (entries_.insert_or_assign(key, entry).second) words_ += key.size();
}

std::vector<FactChecker::Moving>::iterator FactChecker::moving_with(const std::string& path) {
  return std::find_if(moving_.begin(), moving_.end(), [&](const Moving& m) {
    return std::find(m.names.begin(), m.names.end(), path) != m.names.end();
  });
}

void FactChecker::add(const Fact& f) {
  // What is said of a path's inode says that it is there.
  const auto present = [this](const std::string& path) -> Expect& {
    Expect& e = at_[path];
    e.absent = false;
    return e;
  };
  // A nostale fact ends at any fact that changes what its name holds.
  if (f.kind == FactKind::rewrite || f.kind == FactKind::remove || f.kind == FactKind::absent) nostale_.erase(f.path);
  if (f.kind == FactKind::rename) {
    nostale_.erase(f.path);
    nostale_.erase(f.second);
  }
  switch (f.kind) {
    case FactKind::nostale:
      if (f.blocks.empty())
        nostale_.erase(f.path);
      else
        nostale_[f.path] = NoStale{static_cast<std::size_t>(f.size), f.blocks};
      break;
    case FactKind::file:
    case FactKind::prefix:
      if (auto m = moving_with(f.path); m != moving_.end()) moving_.erase(m);  // settled here
      {
        Expect& e = at_[f.path];  // what it said of the inode stands
        e.content = Content{f.size, f.crc32c, f.kind == FactKind::file};
        e.absent = false;
      }
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
      // Until both directories are synced it may be found under both names
      // (a filesystem that logs one directory's changes alone shows it so),
      // with a link for each: its link count is no longer known.
      m.expect.nlink.reset();
      at_.erase(f.path);
      at_.erase(f.second);  // whatever was at TO is being replaced
      moving_.push_back(std::move(m));
      break;
    }
    case FactKind::rewrite:
      // What was said of the inode under this name ends; that it is there
      // stays. A name of an object being renamed: it is still under one of
      // its names, holding what it now holds.
      if (auto m = moving_with(f.path); m != moving_.end())
        m->expect = Expect{};
      else
        at_[f.path] = Expect{};
      break;
    case FactKind::remove:
      at_.erase(f.path);
      if (auto m = moving_with(f.path); m != moving_.end()) moving_.erase(m);
      break;
    case FactKind::mode:
      present(f.path).mode = std::pair{f.second, static_cast<std::uint32_t>(f.size)};
      break;
    case FactKind::nlink:
      present(f.path).nlink = f.size;
      break;
    case FactKind::symlink:
      present(f.path).target = f.second;
      break;
    case FactKind::xattr:
      present(f.path).xattrs[f.second] = std::pair{f.size, f.crc32c};
      break;
    case FactKind::noxattr:
      present(f.path).xattrs[f.second] = std::nullopt;
      break;
    case FactKind::absent:
      if (auto m = moving_with(f.path); m != moving_.end()) {  // not under this name
        m->names.erase(std::find(m->names.begin(), m->names.end(), f.path));
        if (m->names.empty()) moving_.erase(m);
      }
      at_[f.path] = Expect{};
      at_[f.path].absent = true;
      break;
  }
}

void FactChecker::check_meta(const Expect& e, const std::string& path, const FactView& fs, const std::string& shown,
                            std::vector<FactViolation>& out) {
  const PathMeta m = fs.meta(path, !e.xattrs.empty());
  const auto broke = [&](const std::string& what, const std::string& expected, const std::string& found) {
    out.push_back({shown, expected, found, what, m.present ? "other" : "missing"});
  };
  if (!m.present) return broke("present", "present", "missing");
  const auto octal = [](std::uint32_t bits) {
    char text[8];
    std::snprintf(text, sizeof text, "%04o", bits);
    return std::string(text);
  };
  if (e.mode && (m.type != e.mode->first || m.mode != e.mode->second))
    broke("mode", e.mode->first + " " + octal(e.mode->second), m.type + " " + octal(m.mode));
  if (e.nlink && m.nlink != *e.nlink)
    broke("nlink", std::to_string(*e.nlink) + " links", std::to_string(m.nlink) + " links");
  if (e.target && (m.type != "symlink" || m.target != *e.target))
    broke("symlink", "a symlink to " + *e.target, m.type == "symlink" ? "a symlink to " + m.target : "a " + m.type);
  for (const auto& [name, value] : e.xattrs) {
    const auto it = m.xattrs.find(name);
    if (!value && it != m.xattrs.end()) broke("xattr", name + " absent", name + " present");
    if (value && it == m.xattrs.end()) broke("xattr", name + ": " + describe(value->first, value->second), name + " absent");
    if (value && it != m.xattrs.end() && it->second != *value)
      broke("xattr", name + ": " + describe(value->first, value->second), name + ": " + describe(it->second.first, it->second.second));
  }
}

std::vector<FactViolation> FactChecker::check(const FactView& fs) const {
  std::vector<FactViolation> out;
  const auto expected = [](const Expect& e) {
    if (!e.content) return std::string("present");
    if (e.content->exact) return describe(e.content->size, e.content->crc32c);
    return "at least " + std::to_string(e.content->size) + " bytes, " + first_bytes(e.content->size, e.content->crc32c);
  };
  const auto what = [](const Expect& e) {
    return std::string(!e.content ? "present" : e.content->exact ? "file" : "prefix");
  };
  // How `s` breaks `e`; empty when it does not.
  const auto how = [](const Expect& e, const PathContent& s) -> std::string {
    if (!s.present) return "missing";
    if (!e.content) return "";
    const Content& c = *e.content;
    if (!s.regular) return "not a regular file";
    if (c.exact ? s.size != c.size : s.size < c.size) return c.exact ? "size" : "short";
    if (s.crc_bytes != c.size || s.crc != c.crc32c) return "content";
    return "";
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
    if (e.absent) {
      if (fs.look(path, std::nullopt).present) out.push_back({path, "absent", "present", "absent", "present"});
      continue;
    }
    const PathContent s = fs.look(path, want(e));
    if (const std::string broke = how(e, s); !broke.empty()) {
      out.push_back({path, expected(e), found(e, s), what(e), broke});
      continue;
    }
    if (e.has_meta()) check_meta(e, path, fs, path, out);
  }
  for (const Moving& m : moving_) {
    std::string names, seen, broke;
    bool ok = false;
    for (const std::string& name : m.names) {
      const PathContent s = fs.look(name, want(m.expect));
      const std::string h = how(m.expect, s);
      ok = ok || h.empty();
      if (broke.empty() || broke == "missing") broke = h;  // the closest it came
      names += (names.empty() ? "" : " | ") + name;
      seen += (seen.empty() ? "" : " | ") + found(m.expect, s);
    }
    if (!ok) out.push_back({names, expected(m.expect) + " under one of the names", seen, "renamed", broke});
  }
  for (const auto& [path, n] : nostale_) {
    const std::optional<std::vector<std::uint32_t>> held = fs.blocks(path, n.unit);
    if (!held) continue;  // not there, or no file: nothing to judge
    const std::uint32_t zero = fact_zero_block_crc(n.unit);
    std::size_t stale = 0, first = 0;
    for (std::size_t i = 0; i < std::min(held->size(), n.blocks.size()); ++i) {
      const std::uint32_t crc = (*held)[i];
      if (crc == zero || std::find(n.blocks[i].begin(), n.blocks[i].end(), crc) != n.blocks[i].end()) continue;
      if (stale++ == 0) first = i;
    }
    if (stale == 0) continue;
    char seen[128];
    std::snprintf(seen, sizeof seen, "%zu of its blocks hold bytes no file of this name held, block %zu first (crc32c %08x)",
                  stale, first, (*held)[first]);
    out.push_back({path, "each " + std::to_string(n.unit) + "-byte block zeroes or its own bytes", seen, "stale", "content"});
  }
  return out;
}

}  // namespace crashlab
