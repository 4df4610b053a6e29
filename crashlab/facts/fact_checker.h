// SPDX-License-Identifier: BSD-3-Clause
// FactChecker: what the facts marked up to a crash point (crashlab/facts/fact.h) say the
// filesystem must hold, folded in mark order, and the check of a crash
// state's filesystem against it (read with fscore::ext4::TreeReader, no kernel, or
// any other FactView).
//
//   file P size S crc32c H   P exists and holds exactly those bytes
//   prefix P size S crc32c H P exists and starts with those bytes
//   entry D N                D/N exists (with the content a file fact or a
//                            rename carried to it, if any)
//   rename A B               the object at A is at one of A, B (or, after
//                            more renames before it settles, any name it
//                            was given), never at none, with its content
//   rewrite P                P exists; its content is no longer known
//   remove P                 nothing about P (or an object P is a name of)
//                            holds any more
//   absent P                 P does not exist (nor is it one of the names a
//                            renamed object may be found under)
//   mode P T M, nlink P N,   P exists and is a T with permission bits M;
//   symlink P T, xattr P N   has N links; is a symlink to T; has the
//   size S crc32c H,         attribute N with that value, or none
//   noxattr P N              (a rewrite ends them all, a rename carries them
//                            but the link count)
//   nostale P U BLOCK...     if P is a regular file, each whole U-byte block
//                            of it within its size is zeroes or one of the
//                            contents listed for it (ended by a rewrite,
//                            remove, absent or rename of P, or the next
//                            nostale P)
//
// Pure.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "crashlab/states/hash.h"
#include "fscore/ext4/tree_reader.h"
#include "crashlab/facts/fact.h"

namespace crashlab {

struct FactViolation {
  std::string path;      // the path (or "A | B" for a rename not settled)
  std::string expected;  // "12345 bytes, crc32c 0badf00d", "present"
  std::string found;     // "missing", "100 bytes, crc32c 12345678", ...
  // What was expected, in a word: "file" (its exact contents), "prefix"
  // (its first bytes), "renamed" (under one of its names), "present",
  // "absent", "mode", "nlink", "symlink", "xattr", "stale" (a block no
  // file of the name held, nor zeroes); and how it broke:
  // "missing", "not a regular file", "short" (fewer bytes than the fact),
  // "size" (another size), "content" (other bytes), "present" (an absent
  // name there), "other" (another mode, link count, target or value).
  std::string what, how;
};

// What a path holds, as the oracle asks a filesystem: whether it is there,
// whether it is a regular file, and then its size and the CRC-32C (crashlab/facts/fact.h)
// of its first `crc_bytes` bytes.
// What else a path is, for the facts that speak of its inode: its type
// ("file", "dir", "symlink", "other"), permission bits, links, a symlink's
// target, its extended attributes (by full name: their size and CRC-32C).
struct PathMeta {
  bool present = false;
  std::string type;
  std::uint32_t mode = 0;
  std::uint64_t nlink = 0;
  std::string target;
  std::map<std::string, std::pair<std::uint64_t, std::uint32_t>> xattrs;
};

struct PathContent {
  bool present = false;
  bool regular = false;
  std::uint64_t size = 0;
  std::uint64_t crc_bytes = 0;
  std::uint32_t crc = 0;
};

// A filesystem as the oracle reads it: ext4 images through TreeReader (the
// fast path, TreeFacts below), a mounted one through the kernel (the crash
// lab's ground truth).
class FactView {
 public:
  virtual ~FactView() = default;
  // `prefix`: nullopt asks only whether it is there and what it is; else
  // the size, and the crc of the first min(*prefix, size) bytes of a
  // regular file. Throws when the filesystem cannot say.
  virtual PathContent look(const std::string& path, std::optional<std::uint64_t> prefix) const = 0;
  // Its inode's type, mode, links, target and (with `xattrs`) attributes.
  // Throws when the filesystem cannot say.
  virtual PathMeta meta(const std::string& path, bool xattrs) const = 0;
  // The fact_block_crcs of a regular file's whole blocks of `unit` bytes
  // within its size; nullopt when it is not there or not a regular file.
  // Throws when the filesystem cannot say.
  virtual std::optional<std::vector<std::uint32_t>> blocks(const std::string& path, std::size_t unit) const = 0;
};

// What parts of files hash to (their CRC-32C), by the exact words that name
// their bytes (a chunk of 256 KiB: where each part of it lies in the chunk
// and the source's identity() of the blocks under it): kept from one crash
// state to the next over one source, so that a part whose blocks hold what
// they held in an earlier state is not read again, and a file appended to is
// read from where it changed. A key is compared whole: never two chunks
// under one entry.
class ContentCache {
 public:
  struct Entry {
    std::uint64_t crc_bytes = 0;
    std::uint32_t crc = 0;
  };
  using Key = std::vector<std::uint64_t>;
  const Entry* find(const Key& key) const;
  void put(const Key& key, Entry entry);  // forgets everything past 8Mi words of keys
  std::uint64_t hits() const { return hits_; }
  std::uint64_t misses() const { return misses_; }

 private:
  std::unordered_map<Key, Entry, WordsHash> entries_;
  std::uint64_t words_ = 0;
  mutable std::uint64_t hits_ = 0, misses_ = 0;
};

class TreeFacts final : public FactView {
 public:
  // With a cache, files are read only when it does not know them.
  explicit TreeFacts(const fscore::ext4::TreeReader& tree, ContentCache* cache = nullptr) : tree_(tree), cache_(cache) {}
  PathContent look(const std::string& path, std::optional<std::uint64_t> prefix) const override;
  PathMeta meta(const std::string& path, bool xattrs) const override;
  std::optional<std::vector<std::uint32_t>> blocks(const std::string& path, std::size_t unit) const override;

 private:
  std::uint32_t chunked_crc(const fscore::ext4::TreeReader::Found& file, std::uint64_t want) const;

  const fscore::ext4::TreeReader& tree_;
  ContentCache* cache_;
};

class FactChecker {
 public:
  // In mark order.
  void add(const Fact& fact);

  // Every expectation checked against `fs`; empty when all hold. A broken
  // filesystem (TreeReader throws) is the caller's to report.
  std::vector<FactViolation> check(const FactView& fs) const;
  std::vector<FactViolation> check(const fscore::ext4::TreeReader& fs) const { return check(TreeFacts(fs)); }

  std::size_t expectations() const { return at_.size() + moving_.size() + nostale_.size(); }

 private:
  struct Content {
    std::uint64_t size = 0;
    std::uint32_t crc32c = 0;
    bool exact = true;  // file; false: prefix (it may be longer)
  };
  struct Expect {
    std::optional<Content> content;  // none: it exists, its bytes are not known
    bool absent = false;             // it does not exist
    // What the inode facts say (mode, nlink, symlink, xattr, noxattr).
    std::optional<std::pair<std::string, std::uint32_t>> mode;  // type, permission bits
    std::optional<std::uint64_t> nlink;
    std::optional<std::string> target;
    std::map<std::string, std::optional<std::pair<std::uint64_t, std::uint32_t>>> xattrs;  // none: absent
    bool has_meta() const { return mode || nlink || target || !xattrs.empty(); }
  };
  // The inode facts of `e` checked against `fs` at `path` (or under one of
  // a renamed object's names, `shown`), violations appended.
  static void check_meta(const Expect& e, const std::string& path, const FactView& fs, const std::string& shown,
                         std::vector<FactViolation>& out);
  struct Moving {  // an object renamed, not settled yet
    std::vector<std::string> names;
    Expect expect;
  };
  // The object being renamed with `path` among its names, if any.
  std::vector<Moving>::iterator moving_with(const std::string& path);

  std::map<std::string, Expect> at_;
  std::vector<Moving> moving_;
  // The nostale facts in force, by path: their unit and each block's
  // allowed contents.
  struct NoStale {
    std::size_t unit = 0;
    std::vector<std::vector<std::uint32_t>> blocks;
  };
  std::map<std::string, NoStale> nostale_;
};

}  // namespace crashlab
