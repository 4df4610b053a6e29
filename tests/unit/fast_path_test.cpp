// SPDX-License-Identifier: BSD-3-Clause
// The fast path's check of one state (crashlab/judge/fast_path.h) on images
// fscore's builder makes and the tests damage: a directory block or an
// extent tree block whose checksum no longer holds is refused as the
// kernel refuses it (unreadable, never a pass); the orphan list is taken as
// a mount takes it (fs/ext4/orphan.c: ext4_orphan_get, ext4_orphan_cleanup):
// orphans the kernel deletes or truncates leave what the facts see as it
// was, one the kernel refuses makes the state unreadable; an entry naming
// an inode with no links is refused as a lookup refuses it (ESTALE); and
// what the fast path cannot read (fast commits) is named up front.
#include <catch2/catch.hpp>

#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "crashlab/facts/fact_checker.h"
#include "crashlab/judge/fast_path.h"
#include "fscore/ext4/dir_block.h"
#include "fscore/ext4/features.h"
#include "fscore/ext4/image_builder.h"
#include "fscore/ext4/image_reader.h"
#include "fscore/ext4/inode.h"
#include "fscore/ext4/superblock.h"
#include "fscore/ext4/tree_reader.h"
#include "crashlab/facts/fact.h"
#include "tests/support/sparse_image.h"

namespace fast_path_test {

namespace ext4 = fscore::ext4;
using Bytes = std::vector<std::uint8_t>;
using nvj::test::SparseImage;

namespace {

constexpr std::uint32_t kBlock = 4096;

Bytes content(std::size_t n, std::uint8_t seed) {
  Bytes b(n);
  for (std::size_t i = 0; i < n; ++i) b[i] = static_cast<std::uint8_t>(seed + i * 7 + i / 251);
  return b;
}

// An ext4 without a journal: "small" (one block), "frag" (eight blocks
// 64 KiB apart: a tree block of extents) and "gone", in the root.
struct Built {
  SparseImage image{16u << 20, kBlock};
  Bytes small = content(1000, 1), frag = content(8 * 65536, 2), gone = content(5000, 3);
  std::vector<ext4::ByteRange> frag_ranges;

  Built() {
    ext4::ImageOptions o;
    o.device_bytes = 16u << 20;
    o.block_size = kBlock;
    o.journal = ext4::JournalKind::kNone;
    o.uuid = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
    o.hash_seed = {7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7};
    o.now = {1700000000, 0};
    ext4::ImageBuilder b(o, &image);
    ext4::Attributes a;
    a.permissions = 0644;
    const auto add = [&](const char* name, const Bytes& bytes, std::vector<ext4::ByteRange> ranges) {
      b.add_file(ext4::ImageBuilder::kRoot, name, a, bytes.size(), ranges, [&bytes](std::uint64_t at, std::span<std::uint8_t> out) {
        std::copy_n(bytes.begin() + static_cast<std::ptrdiff_t>(at), out.size(), out.begin());
      });
    };
    add("small", small, {{0, small.size()}});
    for (std::uint64_t i = 0; i < 8; ++i) frag_ranges.push_back({i * 65536, 4096});
    for (std::size_t i = 0; i < frag.size(); ++i)
      if (i % 65536 >= 4096) frag[i] = 0;  // the holes read as zeroes
    add("frag", frag, frag_ranges);
    add("gone", gone, {{0, gone.size()}});
    b.finish();
  }
  ext4::ImageInfo info() const { return ext4::read_image(image); }
};

std::string fact_label(const char* kind, const std::string& path, const Bytes& bytes) {
  char crc[16];
  std::snprintf(crc, sizeof crc, "%08x", crashlab::fact_crc32c(bytes.data(), bytes.size()));
  return std::string("fact ") + kind + " " + path + " size " + std::to_string(bytes.size()) + " crc32c " + crc;
}

crashlab::FactChecker oracle_of(const std::vector<std::string>& labels) {
  crashlab::FactChecker o;
  for (const std::string& l : labels) o.add(*crashlab::parse_fact(l));
  return o;
}

crashlab::StateVerdict check(SparseImage& image, const crashlab::FactChecker& oracle) {
  return crashlab::check_ext4_state(image, image, nullptr, nullptr, oracle, 1700000100, {});
}

// The byte where inode `ino` lies.
std::uint64_t inode_at(const SparseImage& image, std::uint32_t ino) {
  const ext4::ImageInfo info = ext4::read_image(image);
  const std::uint32_t ipg = info.super.inodes_per_group;
  const ext4::GroupDesc d = ext4::read_group_desc(image, info, (ino - 1) / ipg);
  return d.inode_table * kBlock + std::uint64_t{(ino - 1) % ipg} * info.super.inode_size;
}

// Changes inode `ino` and writes it back with its checksum.
void patch_inode(SparseImage& image, std::uint32_t ino, const std::function<void(ext4::Inode&)>& change) {
  const ext4::ImageInfo info = ext4::read_image(image);
  ext4::Inode inode = ext4::read_inode(image, info, ino);
  change(inode);
  Bytes raw(info.super.inode_size);
  const std::uint64_t at = inode_at(image, ino);
  image.read(at, raw);
  ext4::encode_inode(inode, ino, info.super.csum_seed(), raw);
  image.write(at, raw);
}

// Changes the superblock and writes it back with its checksum.
void patch_superblock(SparseImage& image, const std::function<void(ext4::Superblock&)>& change) {
  Bytes raw(1024);
  image.read(1024, raw);
  ext4::Superblock sb = ext4::decode_superblock(std::span<const std::uint8_t, 1024>(raw.data(), 1024));
  change(sb);
  ext4::encode_superblock(sb, std::span<std::uint8_t, 1024>(raw.data(), 1024));
  image.write(1024, raw);
}

void set_last_orphan(SparseImage& image, std::uint32_t ino) {
  patch_superblock(image, [ino](ext4::Superblock& sb) { sb.last_orphan = ino; });
}

// Removes `name` from the root directory (its entry's inode set to 0, the
// block's checksum made again): its inode is on no directory any more.
void unlink_from_root(SparseImage& image, const std::string& name) {
  const ext4::ImageInfo info = ext4::read_image(image);
  const ext4::TreeReader tree(image);
  const auto root = tree.lookup("");
  const auto extents = tree.extents(*root, root->inode.size);
  REQUIRE(extents.size() == 1);
  Bytes block(kBlock);
  image.read(extents[0].physical * kBlock, block);
  for (std::size_t at = 0; at + 8 <= block.size();) {
    const std::uint16_t rec_len = static_cast<std::uint16_t>(block[at + 4] | block[at + 5] << 8);
    if (block[at + 6] == name.size() && std::string(block.begin() + static_cast<std::ptrdiff_t>(at + 8),
                                                     block.begin() + static_cast<std::ptrdiff_t>(at + 8 + name.size())) == name)
      std::fill_n(block.begin() + static_cast<std::ptrdiff_t>(at), 4, 0);
    if (rec_len == 0) break;
    at += rec_len;
  }
  ext4::seal_dir_leaf(block, ext4::inode_csum_seed(info.super.csum_seed(), ext4::kRootIno, root->inode.generation));
  image.write(extents[0].physical * kBlock, block);
}

std::uint32_t ino_of(const SparseImage& image, const std::string& name) {
  return ext4::TreeReader(image).lookup(name)->ino;
}

}  // namespace

TEST_CASE("the fast path refuses a directory block or an extent tree block whose checksum fails", "[crash][state]") {
  Built b;
  const crashlab::FactChecker facts = oracle_of({fact_label("file", "small", b.small), fact_label("file", "frag", b.frag)});
  REQUIRE(check(b.image, facts).verdict == crashlab::Verdict::pass);
  const ext4::TreeReader tree(b.image);
  const auto root = tree.lookup("");
  const std::uint64_t dir_block = tree.extents(*root, root->inode.size).at(0).physical;
  const auto frag = tree.lookup("frag");
  REQUIRE(frag->inode.block[6] == 1);  // eh_depth 1: the extents are in a block of their own
  const std::uint64_t leaf = std::uint64_t{frag->inode.block[16]} | std::uint64_t{frag->inode.block[17]} << 8 |
                             std::uint64_t{frag->inode.block[18]} << 16 | std::uint64_t{frag->inode.block[19]} << 24;
  for (const auto& [what, block, error] :
       std::vector<std::tuple<const char*, std::uint64_t, const char*>>{{"directory", dir_block, "directory inode 2, block 0: checksum does not match"},
                                                                        {"extent tree", leaf, ": checksum does not match"}}) {
    CAPTURE(what);
    Built damaged;
    Bytes bytes(kBlock);
    damaged.image.read(block * kBlock, bytes);
    bytes[2000] ^= 0x40;  // free space inside the block: only the checksum notices
    damaged.image.write(block * kBlock, bytes);
    const crashlab::StateVerdict v = check(damaged.image, facts);
    CHECK(v.verdict == crashlab::Verdict::unreadable);
    CHECK_THAT(v.error, Catch::Contains(error));
  }
}

TEST_CASE("orphans read as a mount leaves them; a list the kernel refuses makes the state unreadable", "[crash][state]") {
  const std::vector<std::string> labels{[] {
    Built b;
    return fact_label("file", "small", b.small);
  }()};
  const crashlab::FactChecker facts = oracle_of(labels);
  SECTION("a file unlinked while open: deleted by the mount, nothing else changes") {
    Built b;
    const std::uint32_t gone = ino_of(b.image, "gone");
    unlink_from_root(b.image, "gone");
    patch_inode(b.image, gone, [](ext4::Inode& i) { i.links = 0; });
    set_last_orphan(b.image, gone);
    const crashlab::StateVerdict v = check(b.image, facts);
    CHECK(v.verdict == crashlab::Verdict::pass);
    CHECK(v.orphans == 1);
  }
  SECTION("a file being truncated (links left, the next orphan after it): truncated to its size, as read") {
    Built b;
    const std::uint32_t small = ino_of(b.image, "small"), frag = ino_of(b.image, "frag");
    patch_inode(b.image, small, [&](ext4::Inode& i) { i.dtime = frag; });
    set_last_orphan(b.image, small);
    const crashlab::StateVerdict v = check(b.image, oracle_of({labels[0], fact_label("file", "frag", b.frag)}));
    CHECK(v.verdict == crashlab::Verdict::pass);
    CHECK(v.orphans == 0);
  }
  struct Bad {
    const char* what;
    std::function<void(Built&)> make;
    const char* error;
  };
  const std::vector<Bad> bad{
      {"a reserved inode", [](Built& b) { set_last_orphan(b.image, 5); }, "inode 5: not an ordinary inode"},
      {"an inode never used",
       [](Built& b) { set_last_orphan(b.image, b.info().super.inodes_count - 1); }, "its bit is clear in the inode bitmap"},
      {"a next orphan past the last inode",
       [](Built& b) {
         const std::uint32_t small = ino_of(b.image, "small");
         patch_inode(b.image, small, [&](ext4::Inode& i) { i.dtime = b.info().super.inodes_count + 1; });
         set_last_orphan(b.image, small);
       },
       "does not exist"},
      {"a list that comes back",
       [](Built& b) {
         const std::uint32_t small = ino_of(b.image, "small"), frag = ino_of(b.image, "frag");
         patch_inode(b.image, small, [&](ext4::Inode& i) { i.dtime = frag; });
         patch_inode(b.image, frag, [&](ext4::Inode& i) { i.dtime = small; });
         set_last_orphan(b.image, small);
       },
       "the list comes back to it"},
      {"a device node with links",
       [](Built& b) {
         const std::uint32_t small = ino_of(b.image, "small");
         patch_inode(b.image, small, [](ext4::Inode& i) { i.mode = ext4::kModeChar | 0644; });
         set_last_orphan(b.image, small);
       },
       "cannot truncate"},
  };
  for (const Bad& x : bad) {
    CAPTURE(x.what);
    Built b;
    x.make(b);
    const crashlab::StateVerdict v = check(b.image, facts);
    CHECK(v.verdict == crashlab::Verdict::unreadable);
    CHECK_THAT(v.error, Catch::StartsWith("orphans: orphan list: inode") && Catch::Contains(x.error));
  }
}

TEST_CASE("a filesystem with errors recorded: the mount leaves its orphan list unread", "[crash][state]") {
  // ext4_orphan_cleanup returns at once on ERROR_FS (clearing
  // s_last_orphan): a list it would refuse is never read.
  Built b;
  set_last_orphan(b.image, 5);  // a reserved inode: refused, were the list read
  const crashlab::FactChecker facts = oracle_of({fact_label("file", "small", b.small)});
  REQUIRE(check(b.image, facts).verdict == crashlab::Verdict::unreadable);
  patch_superblock(b.image, [](ext4::Superblock& sb) { sb.state |= 2; });  // EXT4_ERROR_FS
  const crashlab::StateVerdict v = check(b.image, facts);
  CHECK(v.verdict == crashlab::Verdict::pass);
  CHECK(v.orphans_skipped);
  CHECK(v.orphans == 0);
}

TEST_CASE("an entry naming an inode with no links is refused, not read as missing", "[crash][state]") {
  Built b;
  patch_inode(b.image, ino_of(b.image, "small"), [](ext4::Inode& i) { i.links = 0; });
  const crashlab::StateVerdict v = check(b.image, oracle_of({fact_label("file", "small", b.small)}));
  CHECK(v.verdict == crashlab::Verdict::unreadable);
  CHECK_THAT(v.error, Catch::Contains("which has no links"));
}

TEST_CASE("what the fast path cannot read is named up front", "[crash][state]") {
  Built b;
  CHECK_FALSE(crashlab::fast_path_refuses(b.image));
  patch_superblock(b.image, [](ext4::Superblock& sb) { sb.feature_compat |= 0x400; });  // fast_commit
  const auto why = crashlab::fast_path_refuses(b.image);
  REQUIRE(why);
  CHECK_THAT(*why, Catch::Contains("fast_commit (fast commits are not replayed)"));
  SparseImage blank(1u << 20);
  CHECK_THAT(crashlab::fast_path_refuses(blank).value_or(""), Catch::Contains("does not read where the recording starts"));
}

}  // namespace fast_path_test
