// SPDX-License-Identifier: BSD-3-Clause
// Facts: what a workload states about the filesystem as a mark's label, so
// that the crash lab can check every crash state after the mark against it
// (the oracle). One fact per label, a line of words separated by single
// spaces, the first word "fact":
//
//   fact file PATH size BYTES crc32c HEX   PATH holds exactly these bytes:
//                                          BYTES long, CRC-32C HEX (8 hex
//                                          digits, as ext4's crc32c, of the
//                                          whole content)
//   fact prefix PATH size BYTES crc32c HEX PATH starts with these bytes: at
//                                          least BYTES long, its first BYTES
//                                          with CRC-32C HEX (a file being
//                                          appended to, fsynced part way)
//   fact entry DIR NAME                    directory DIR holds the entry NAME
//   fact rename FROM TO                    what was at FROM is at FROM or at
//                                          TO, never at neither
//   fact rewrite PATH                      PATH exists; its content is about
//                                          to change (its last file fact is
//                                          void until the next one)
//   fact remove PATH                       PATH may be gone; no fact about it
//                                          holds any more
//   fact absent PATH                       PATH does not exist (a name removed
//                                          and made durable: fsync of its
//                                          directory)
//   fact mode PATH TYPE OCTAL              PATH is a TYPE (file, dir, symlink)
//                                          with these permission bits (0644)
//   fact nlink PATH N                      PATH's inode has N links
//   fact symlink PATH TARGET               PATH is a symlink to TARGET
//   fact xattr PATH NAME size BYTES crc32c HEX
//                                          PATH has the extended attribute
//                                          NAME ("user.x") with this value
//   fact noxattr PATH NAME                 PATH has no attribute NAME
//   fact nostale PATH UNIT [BLOCK]...      if PATH is a regular file, its
//                                          whole blocks of UNIT bytes (the
//                                          filesystem's block: what it writes
//                                          alone) within its size hold no
//                                          other file's old data:
//                                          block i is zeroes or one of the
//                                          contents BLOCK i lists (HEX/HEX...:
//                                          the CRC-32Cs of what this name's
//                                          files held there, the last part
//                                          block of each zero-padded; "zero":
//                                          zeroes alone); blocks past the
//                                          list are not judged, and with no
//                                          BLOCK it judges nothing (it ends
//                                          the one before)
//
// A nostale fact holds from its mark until the next nostale, rewrite,
// remove, rename (of either name) or absent fact of its path. It is judged by the name, whatever
// file the name holds: its BLOCK lists are the union over every file the
// name held. A fact that says more than before (file, prefix, entry, absent) is posted after the call
// that made it durable has returned (fsync of the file, fsync of the
// directory); one that says less (rename, rewrite, remove) before the call
// that changes what is there. A rewrite ends every fact about PATH but that
// it exists (its content, mode, links, attributes). So a fact is true at every moment after its
// mark: one that arrives late is still sound, one that arrives early would
// not be.
//
// Paths are relative to the filesystem's root, '/' between components, no
// component empty, "." or ".." (DIR is "." for the root itself). In a label
// every byte of a path or name that is not printable ASCII, a space or '%'
// is written %XX (two upper-case hex digits). Pure.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace crashlab {

enum class FactKind { file, entry, rename, rewrite, remove, prefix, absent, mode, nlink, symlink, xattr, noxattr, nostale };

struct Fact {
  FactKind kind = FactKind::file;
  std::string path;    // file, prefix, rewrite, remove, absent: the path; entry: the directory; rename: from
  std::string second;  // entry: the name; rename: to; mode: the type; symlink: the target; xattr, noxattr: the name
  std::uint64_t size = 0;    // file, prefix, xattr; mode: the permission bits; nlink: the links; nostale: the unit
  std::uint32_t crc32c = 0;  // file, prefix, xattr
  // nostale: for each block of `size` bytes from the first, the CRC-32Cs
  // of the contents it may hold besides zeroes (none: zeroes alone).
  std::vector<std::vector<std::uint32_t>> blocks{};

  bool operator==(const Fact&) const = default;
};

// A label that starts with "fact " but is not a fact, with what is wrong.
class FactError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// The label for a fact. Throws FactError for a path or name the format
// cannot hold (empty, absolute, with "." or ".." components; a name with
// '/').
std::string format_fact(const Fact& fact);

// The fact in a mark's label; nullopt when the label is no fact (it does not
// start with "fact "). Throws FactError naming what is wrong otherwise.
std::optional<Fact> parse_fact(std::string_view label);

const char* to_string(FactKind kind);

// The CRC-32C a file fact gives for `n` bytes of content: the standard one
// (fscore/crc32c.h), what the workloads post and the oracle compares.
std::uint32_t fact_crc32c(const void* data, std::size_t n);

// The fact_crc32c of each of `n` bytes' blocks of `unit` bytes (a nostale
// fact's): with `partial`, the last part block too, zero-padded (what the
// file's block holds); else whole blocks alone (what a crash state's file
// is judged on). A unit is a multiple of 512 up to kMaxFactUnit.
constexpr std::uint64_t kMaxFactUnit = 65536;
std::vector<std::uint32_t> fact_block_crcs(const void* data, std::size_t n, std::size_t unit, bool partial);
// The fact_crc32c of a block of `unit` zeroes.
std::uint32_t fact_zero_block_crc(std::size_t unit);

}  // namespace crashlab
