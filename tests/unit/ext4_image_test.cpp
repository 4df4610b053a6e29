// SPDX-License-Identifier: BSD-3-Clause
// ImageBuilder, build_journal_device and read_image on images built in
// memory.
#include <catch2/catch.hpp>

#include <array>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "fscore/block_io.h"
#include "fscore/crc32c.h"
#include "fscore/endian.h"
#include "fscore/ext4/block_map.h"
#include "fscore/ext4/features.h"
#include "fscore/ext4/group_desc.h"
#include "fscore/ext4/image_builder.h"
#include "fscore/ext4/image_reader.h"
#include "fscore/ext4/inode.h"
#include "fscore/ext4/journal_device.h"
#include "fscore/ext4/superblock.h"
#include "tests/support/block_mapped_journal.h"
#include "tests/support/sparse_image.h"

namespace ext4_image_test {

using fscore::Uuid;
using fscore::ext4::Attributes;
using fscore::ext4::ByteRange;
using fscore::ext4::FileType;
using fscore::ext4::ImageBuilder;
using fscore::ext4::ImageInfo;
using fscore::ext4::ImageLayout;
using fscore::ext4::ImageOptions;
using fscore::ext4::JournalKind;
using fscore::ext4::NoSpaceError;

namespace {

namespace ext4 = fscore::ext4;

constexpr std::uint64_t kMiB = std::uint64_t{1} << 20;

using MemoryImage = nvj::test::SparseImage;

// The first `size` bytes of another source: a truncated device.
class Prefix : public fscore::BlockSource {
 public:
  Prefix(const fscore::BlockSource& source, std::uint64_t size) : source_(source), size_(size) {}
  std::uint64_t size() const override { return size_; }
  void read(std::uint64_t offset, std::span<std::uint8_t> bytes) const override {
    if (offset > size_ || bytes.size() > size_ - offset) throw std::out_of_range("read past the end of the prefix");
    source_.read(offset, bytes);
  }

 private:
  const fscore::BlockSource& source_;
  std::uint64_t size_;
};

Uuid uuid_of(std::uint8_t first) {
  Uuid u{};
  for (std::size_t i = 0; i < u.size(); ++i) u[i] = static_cast<std::uint8_t>(first + 31 * i);
  return u;
}

ImageOptions options(std::uint64_t bytes, std::uint32_t block_size, JournalKind journal = JournalKind::kInternal) {
  ImageOptions o;
  o.device_bytes = bytes;
  o.block_size = block_size;
  o.journal = journal;
  o.uuid = uuid_of(1);
  o.hash_seed = uuid_of(2);
  o.label = "unit";
  o.now = {1700000000, 123};
  return o;
}

Attributes attributes() {
  Attributes a;
  a.permissions = 0644;
  a.atime = a.mtime = a.ctime = a.crtime = {1700000000, 5};
  return a;
}

void check_runs(const std::vector<ext4::BlockRun>& got, const std::vector<ext4::BlockRun>& want) {
  REQUIRE(got.size() == want.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    CAPTURE(i);
    CHECK(got[i].start == want[i].start);
    CHECK(got[i].count == want[i].count);
  }
}

std::uint64_t total(const std::vector<ext4::BlockRun>& runs) {
  std::uint64_t n = 0;
  for (const ext4::BlockRun& r : runs) n += r.count;
  return n;
}

// Where inode `ino` is in the image, found through the superblock and the
// group descriptor as the kernel finds it.
std::uint64_t inode_offset(const fscore::BlockSource& image, std::uint32_t ino) {
  std::array<std::uint8_t, 1024> sbytes{};
  image.read(ext4::kSuperOffset, sbytes);
  const ext4::Superblock sb = ext4::decode_superblock(sbytes);
  const std::uint32_t group = (ino - 1) / sb.inodes_per_group;
  std::vector<std::uint8_t> desc(sb.desc_size);
  image.read((std::uint64_t{sb.first_data_block} + 1) * sb.block_size() + std::uint64_t{group} * sb.desc_size, desc);
  const ext4::GroupDesc d = ext4::decode_group_desc(desc);
  return d.inode_table * sb.block_size() + std::uint64_t{(ino - 1) % sb.inodes_per_group} * sb.inode_size;
}

ext4::Inode read_inode(const fscore::BlockSource& image, std::uint32_t ino) {
  std::vector<std::uint8_t> raw(256);
  image.read(inode_offset(image, ino), raw);
  return ext4::decode_inode(raw);
}

// A small tree with a bit of everything; counts the builder's reads of
// file data.
void add_tree(ImageBuilder& b, int& reads) {
  const Attributes a = attributes();
  const std::uint32_t etc = b.add_directory(ImageBuilder::kRoot, "etc", a);
  const std::uint32_t deep = b.add_directory(etc, "deep", a);
  const ext4::FileReader reader = [&reads](std::uint64_t offset, std::span<std::uint8_t> buffer) {
    ++reads;
    for (std::size_t i = 0; i < buffer.size(); ++i) buffer[i] = static_cast<std::uint8_t>((offset + i) * 7);
  };
  const std::vector<ByteRange> whole = {{0, 100000}};
  const std::uint32_t file = b.add_file(etc, "motd", a, 100000, whole, reader);
  const std::vector<ByteRange> sparse = {{0, 10}, {1 * kMiB, 4096}};
  b.add_file(deep, "sparse", a, 2 * kMiB, sparse, reader);
  b.add_file(ImageBuilder::kRoot, "empty", a, 0, {}, reader);
  b.add_symlink(etc, "fast", a, "motd");
  b.add_symlink(etc, "slow", a, std::string(200, 'x'));
  b.add_special(deep, "fifo", a, FileType::kFifo);
  b.add_special(deep, "null", a, FileType::kChar, 1, 3);
  b.add_hard_link(ImageBuilder::kRoot, "motd-link", file);
}

}  // namespace

TEST_CASE("read_image finds the internal journal of a 1 KiB-block image", "[ext4][image]") {
  MemoryImage image(8 * kMiB);
  ImageBuilder b(options(8 * kMiB, 1024), &image);
  const ImageLayout layout = b.finish();
  REQUIRE(layout.journal == JournalKind::kInternal);
  REQUIRE_FALSE(layout.journal_runs.empty());
  CHECK(total(layout.journal_runs) == ext4::default_journal_blocks(layout.geometry.blocks));

  CHECK(ext4::has_ext4_magic(image));
  const ImageInfo info = ext4::read_image(image);
  CHECK_FALSE(info.journal_device);
  CHECK(info.block_size == 1024u);
  CHECK(info.blocks == layout.geometry.blocks);
  CHECK(info.super.uuid == uuid_of(1));
  CHECK(info.super.volume_name == "unit");
  CHECK(info.super.journal_inum == ext4::kJournalIno);
  CHECK(info.journal == JournalKind::kInternal);
  check_runs(info.journal_runs, layout.journal_runs);
  CHECK(info.journal_superblock_block == layout.journal_runs.front().start);
  CHECK(info.journal_super.block_size == 1024u);
  CHECK(info.journal_super.maxlen == total(layout.journal_runs));
  CHECK(info.journal_super.first == 1u);
  CHECK(info.journal_super.start == 0u);
  CHECK(info.journal_super.uuid == uuid_of(1));
  CHECK(info.journal_super.nr_users == 1u);
}

TEST_CASE("read_image finds the internal journal of a 4 KiB-block image", "[ext4][image]") {
  MemoryImage image(64 * kMiB);
  ImageOptions o = options(64 * kMiB, 4096);
  o.journal_blocks = 2048;
  ImageBuilder b(o, &image);
  int reads = 0;
  add_tree(b, reads);
  const ImageLayout layout = b.finish();
  CHECK(reads > 0);
  const ImageInfo info = ext4::read_image(image);
  CHECK(info.block_size == 4096u);
  CHECK(info.blocks == 16384u);
  check_runs(info.journal_runs, layout.journal_runs);
  CHECK(total(info.journal_runs) == 2048u);
  CHECK(info.journal_super.maxlen == 2048u);
  CHECK(info.journal_super.block_size == 4096u);
  // The image stays sparse: metadata and file data, not the journal.
  CHECK(image.bytes_written() < 4 * kMiB);
}

TEST_CASE("read_image follows a journal of more than four extents through its leaf", "[ext4][image]") {
  // 200000 blocks: seven extents of at most 32768, so the journal inode's
  // tree has depth 1. The image is 2 GiB but only its metadata is stored.
  const std::uint64_t bytes = 2048 * kMiB;
  MemoryImage image(bytes);
  ImageOptions o = options(bytes, 4096);
  o.journal_blocks = 200000;
  ImageBuilder b(o, &image);
  const ImageLayout layout = b.finish();
  const ImageInfo info = ext4::read_image(image);
  check_runs(info.journal_runs, layout.journal_runs);
  CHECK(total(info.journal_runs) == 200000u);
  CHECK(info.journal_super.maxlen == 200000u);
  const ext4::Inode journal = read_inode(image, ext4::kJournalIno);
  CHECK(fscore::load_le<std::uint16_t>(journal.block.data()) == ext4::kExtentMagic);
  CHECK(fscore::load_le<std::uint16_t>(journal.block.data() + 6) == 1);  // eh_depth
  CHECK(journal.size == 200000u * 4096u);
  CHECK(image.pages().size() < 64u);
}

TEST_CASE("read_image joins a journal allocated in pieces", "[ext4][image]") {
  // 1 KiB blocks, 32 groups: backup superblocks and the flex group's
  // metadata leave no gap of 110000 blocks, so the journal is in pieces.
  const std::uint64_t bytes = 256 * kMiB;
  MemoryImage image(bytes);
  ImageOptions o = options(bytes, 1024);
  o.journal_blocks = 110000;
  ImageBuilder b(o, &image);
  const ImageLayout layout = b.finish();
  REQUIRE(layout.journal_runs.size() > 1u);
  CHECK(total(layout.journal_runs) == 110000u);
  const ImageInfo info = ext4::read_image(image);
  check_runs(info.journal_runs, layout.journal_runs);
  CHECK(info.journal_superblock_block == layout.journal_runs.front().start);
  CHECK(info.journal_super.maxlen == 110000u);
}

TEST_CASE("read_image follows a block-mapped journal through indirect blocks", "[ext4][image]") {
  // ext3's journal and ext4's without extents: 1024 blocks of 1 KiB need a
  // double indirect block, 1024 blocks of 4 KiB a single one.
  for (const std::uint32_t bs : {1024u, 4096u}) {
    CAPTURE(bs);
    MemoryImage image(16 * kMiB);
    ImageOptions o = options(16 * kMiB, bs);
    o.journal_blocks = 1024;
    ImageBuilder b(o, &image);
    const ImageLayout layout = b.finish();
    const std::vector<std::uint64_t> indirect = nvj::test::make_journal_block_mapped(image, layout.journal_runs);
    CHECK(indirect.size() == (bs == 1024 ? 1u + 1u + 3u : 1u));
    REQUIRE((read_inode(image, ext4::kJournalIno).flags & ext4::kExtentsFl) == 0u);
    const ImageInfo info = ext4::read_image(image);
    CHECK(info.journal == JournalKind::kInternal);
    check_runs(info.journal_runs, layout.journal_runs);
    CHECK(info.journal_super.maxlen == 1024u);
    CHECK(info.journal_superblock_block == layout.journal_runs.front().start);

    // A hole in the middle of the map is refused.
    const std::uint64_t at = inode_offset(image, ext4::kJournalIno);
    std::vector<std::uint8_t> raw(256);
    image.read(at, raw);
    ext4::Inode j = ext4::decode_inode(raw);
    fscore::store_le<std::uint32_t>(j.block.data() + 4 * 5, 0);
    ext4::encode_inode(j, ext4::kJournalIno, fscore::crc32c(~0u, uuid_of(1).data(), 16), raw);
    image.write(at, raw);
    CHECK_THROWS_WITH(ext4::read_image(image), Catch::Contains("hole"));
  }
}

TEST_CASE("read_image of an image without a journal or with an external one", "[ext4][image]") {
  SECTION("none") {
    MemoryImage image(16 * kMiB);
    ImageBuilder b(options(16 * kMiB, 4096, JournalKind::kNone), &image);
    const ImageLayout layout = b.finish();
    CHECK(layout.journal_runs.empty());
    const ImageInfo info = ext4::read_image(image);
    CHECK(info.journal == JournalKind::kNone);
    CHECK(info.journal_runs.empty());
    CHECK((info.super.feature_compat & ext4::compat::kHasJournal) == 0u);
  }
  SECTION("external") {
    MemoryImage image(16 * kMiB);
    ImageOptions o = options(16 * kMiB, 4096, JournalKind::kExternal);
    o.external_journal_uuid = uuid_of(77);
    ImageBuilder b(o, &image);
    b.finish();
    const ImageInfo info = ext4::read_image(image);
    CHECK(info.journal == JournalKind::kExternal);
    CHECK(info.journal_runs.empty());
    CHECK(info.super.journal_uuid == uuid_of(77));
    CHECK(info.super.journal_inum == 0u);
  }
  SECTION("external without the journal's uuid is refused") {
    CHECK_THROWS_AS(ImageBuilder(options(16 * kMiB, 4096, JournalKind::kExternal), nullptr), std::invalid_argument);
  }
}

TEST_CASE("read_image reads an external journal device back", "[ext4][image]") {
  for (const std::uint32_t bs : {1024u, 4096u}) {
    CAPTURE(bs);
    MemoryImage device(8 * kMiB);
    ext4::JournalDeviceOptions o;
    o.device_bytes = 8 * kMiB;
    o.block_size = bs;
    o.uuid = uuid_of(40);
    o.hash_seed = uuid_of(41);
    o.label = "journal";
    o.now = {1700000000, 0};
    o.users = {uuid_of(1), uuid_of(2)};
    const ext4::JournalDeviceLayout layout = ext4::build_journal_device(o, device);
    CHECK(layout.blocks == 8 * kMiB / bs);
    CHECK(layout.superblock_block == (bs == 1024 ? 2u : 1u));
    CHECK(layout.first_log_block == layout.superblock_block + 1);

    CHECK(ext4::has_ext4_magic(device));
    const ImageInfo info = ext4::read_image(device);
    CHECK(info.journal_device);
    CHECK(info.block_size == bs);
    CHECK(info.blocks == layout.blocks);
    CHECK(info.super.uuid == uuid_of(40));
    CHECK(info.super.volume_name == "journal");
    CHECK((info.super.feature_incompat & ext4::incompat::kJournalDev) != 0u);
    CHECK(info.journal_superblock_block == layout.superblock_block);
    CHECK(info.journal_super.uuid == uuid_of(40));
    CHECK(info.journal_super.block_size == bs);
    CHECK(info.journal_super.maxlen == layout.blocks);
    CHECK(info.journal_super.first == layout.first_log_block);
    CHECK(info.journal_super.nr_users == 2u);
    CHECK(info.journal_super.users == o.users);
  }
}

TEST_CASE("journal device sizes and block sizes are checked", "[ext4][image]") {
  CHECK_THROWS_AS(ext4::plan_journal_device(8 * kMiB, 8192), std::invalid_argument);
  // 1024 log blocks after the superblocks are the minimum.
  CHECK_NOTHROW(ext4::plan_journal_device(1026 * 4096, 4096));
  CHECK_THROWS_AS(ext4::plan_journal_device(1025 * 4096, 4096), std::invalid_argument);
  CHECK_NOTHROW(ext4::plan_journal_device(1027 * 1024, 1024));
  CHECK_THROWS_AS(ext4::plan_journal_device(1026 * 1024, 1024), std::invalid_argument);
}

TEST_CASE("read_image rejects images that are not ext4 truncated or corrupt", "[ext4][image]") {
  MemoryImage image(8 * kMiB);
  ImageBuilder b(options(8 * kMiB, 1024), &image);
  const ImageLayout layout = b.finish();
  REQUIRE_NOTHROW(ext4::read_image(image));

  const MemoryImage blank(8 * kMiB);
  CHECK_FALSE(ext4::has_ext4_magic(blank));
  CHECK_THROWS_WITH(ext4::read_image(blank), Catch::Contains("magic"));
  const Prefix tiny(image, 1500);
  CHECK_FALSE(ext4::has_ext4_magic(tiny));
  CHECK_THROWS_AS(ext4::read_image(tiny), std::runtime_error);
  const Prefix short_device(image, 4 * kMiB);
  CHECK(ext4::has_ext4_magic(short_device));
  CHECK_THROWS_WITH(ext4::read_image(short_device), Catch::Contains("more than the device holds"));

  SECTION("a flipped byte in the journal inode") {
    const std::uint64_t at = inode_offset(image, ext4::kJournalIno) + 0x28;  // its extent root
    std::array<std::uint8_t, 1> byte{};
    image.read(at, byte);
    byte[0] ^= 0x01;
    image.write(at, byte);
    CHECK_THROWS_WITH(ext4::read_image(image), Catch::Contains("checksum"));
  }
  SECTION("a flipped byte in the group descriptor") {
    const std::uint64_t at = 2 * 1024 + 8;  // block 2: the descriptors with 1 KiB blocks
    std::array<std::uint8_t, 1> byte{};
    image.read(at, byte);
    byte[0] ^= 0x01;
    image.write(at, byte);
    CHECK_THROWS_WITH(ext4::read_image(image), Catch::Contains("descriptor"));
  }
  SECTION("a zeroed jbd2 superblock") {
    const std::vector<std::uint8_t> zeros(1024, 0);
    image.write(layout.journal_runs.front().start * 1024, zeros);
    CHECK_THROWS_WITH(ext4::read_image(image), Catch::Contains("jbd2"));
  }
}

TEST_CASE("a dry run with a null sink reads no file data and plans the same layout", "[ext4][image]") {
  const ImageOptions o = options(64 * kMiB, 4096);
  int dry_reads = 0;
  ImageBuilder dry(o, nullptr);
  add_tree(dry, dry_reads);
  const ImageLayout planned = dry.finish();
  CHECK(dry_reads == 0);

  MemoryImage image(64 * kMiB);
  int reads = 0;
  ImageBuilder real(o, &image);
  add_tree(real, reads);
  const ImageLayout built = real.finish();
  CHECK(reads > 0);
  CHECK(image.bytes_written() > 100000u);  // at least the file's data
  CHECK(planned.used_blocks == built.used_blocks);
  CHECK(planned.used_inodes == built.used_inodes);
  CHECK(planned.geometry.blocks == built.geometry.blocks);
  check_runs(planned.journal_runs, built.journal_runs);
  CHECK(ext4::read_image(image).journal_runs.size() == built.journal_runs.size());
}

TEST_CASE("a dry run raises NoSpaceError when the inodes run out", "[ext4][image]") {
  // 2 MiB with 1 KiB blocks: 256 inodes, 11 of them reserved or lost+found.
  ImageBuilder b(options(2 * kMiB, 1024, JournalKind::kNone), nullptr);
  const std::uint64_t inodes = b.geometry().inodes;
  REQUIRE(inodes < 1000u);
  std::uint64_t added = 0;
  bool full = false;
  for (std::uint64_t i = 0; i < 2 * inodes && !full; ++i) {
    try {
      b.add_file(ImageBuilder::kRoot, 'f' + std::to_string(i), attributes(), 0, {}, {});
      ++added;
    } catch (const NoSpaceError&) {
      full = true;
    }
  }
  CHECK(full);
  CHECK(added == inodes - ext4::kFirstIno);
  const ImageLayout layout = b.finish();
  CHECK(layout.used_inodes == inodes);
}

TEST_CASE("a dry run raises NoSpaceError for a file bigger than the free space", "[ext4][image]") {
  ImageBuilder b(options(16 * kMiB, 4096), nullptr);
  const std::uint64_t size = b.geometry().blocks * 4096;  // the whole device
  const std::vector<ByteRange> data = {{0, size}};
  CHECK_THROWS_AS(b.add_file(ImageBuilder::kRoot, "big", attributes(), size, data, {}), NoSpaceError);
  // A file of the same size that is all hole takes no blocks.
  CHECK_NOTHROW(b.add_file(ImageBuilder::kRoot, "hole", attributes(), size, {}, {}));
  // The journal does not fit either when it is most of the device.
  ImageOptions o = options(16 * kMiB, 4096);
  o.journal_blocks = 3000;  // more than half of 4096 blocks
  CHECK_THROWS_AS(ImageBuilder(o, nullptr), std::invalid_argument);
}

TEST_CASE("names must be 1 to 255 bytes without slash or NUL and unique", "[ext4][image]") {
  MemoryImage image(16 * kMiB);
  ImageBuilder b(options(16 * kMiB, 1024), &image);
  const Attributes a = attributes();
  const std::uint32_t root = ImageBuilder::kRoot;
  const auto none = std::vector<ByteRange>{};

  CHECK_THROWS_AS(b.add_file(root, "", a, 0, none, {}), std::invalid_argument);
  CHECK_THROWS_AS(b.add_file(root, std::string(256, 'n'), a, 0, none, {}), std::invalid_argument);
  CHECK_NOTHROW(b.add_file(root, std::string(255, 'n'), a, 0, none, {}));
  CHECK_THROWS_AS(b.add_directory(root, "a/b", a), std::invalid_argument);
  CHECK_THROWS_AS(b.add_directory(root, "/", a), std::invalid_argument);
  CHECK_THROWS_AS(b.add_directory(root, ".", a), std::invalid_argument);
  CHECK_THROWS_AS(b.add_directory(root, "..", a), std::invalid_argument);
  CHECK_THROWS_AS(b.add_symlink(root, std::string("nul\0here", 8), a, "t"), std::invalid_argument);
  CHECK_NOTHROW(b.add_directory(root, "...", a));  // only . and .. are special

  const std::uint32_t file = b.add_file(root, "x", a, 0, none, {});
  CHECK_THROWS_AS(b.add_file(root, "x", a, 0, none, {}), std::invalid_argument);
  CHECK_THROWS_AS(b.add_directory(root, "x", a), std::invalid_argument);
  CHECK_THROWS_AS(b.add_symlink(root, "x", a, "target"), std::invalid_argument);
  CHECK_THROWS_AS(b.add_special(root, "x", a, FileType::kFifo), std::invalid_argument);
  CHECK_THROWS_AS(b.add_hard_link(root, "x", file), std::invalid_argument);
  CHECK_THROWS_AS(b.add_directory(root, "lost+found", a), std::invalid_argument);
  // The same name in another directory is fine; a file is no parent.
  const std::uint32_t sub = b.add_directory(root, "sub", a);
  CHECK_NOTHROW(b.add_file(sub, "x", a, 0, none, {}));
  CHECK_THROWS_AS(b.add_file(file, "y", a, 0, none, {}), std::invalid_argument);
  CHECK_THROWS_AS(b.add_hard_link(root, "dir-link", sub), std::invalid_argument);
  CHECK_THROWS_AS(b.add_special(root, "regular", a, FileType::kRegular), std::invalid_argument);

  // What was refused left the builder whole.
  const ImageLayout layout = b.finish();
  CHECK_NOTHROW(ext4::read_image(image));
  CHECK(layout.used_inodes > ext4::kFirstIno);
}

TEST_CASE("symlink targets must be shorter than a block", "[ext4][image]") {
  for (const std::uint32_t bs : {1024u, 4096u}) {
    CAPTURE(bs);
    ImageBuilder b(options(16 * kMiB, bs), nullptr);
    const Attributes a = attributes();
    CHECK_THROWS_AS(b.add_symlink(ImageBuilder::kRoot, "empty", a, ""), std::invalid_argument);
    CHECK_THROWS_AS(b.add_symlink(ImageBuilder::kRoot, "block", a, std::string(bs, 't')), std::invalid_argument);
    CHECK_THROWS_AS(b.add_symlink(ImageBuilder::kRoot, "more", a, std::string(bs + 1, 't')), std::invalid_argument);
    CHECK_NOTHROW(b.add_symlink(ImageBuilder::kRoot, "longest", a, std::string(bs - 1, 't')));
    CHECK_NOTHROW(b.add_symlink(ImageBuilder::kRoot, "fast", a, std::string(59, 't')));
    CHECK_NOTHROW(b.add_symlink(ImageBuilder::kRoot, "slow", a, std::string(60, 't')));
  }
}

TEST_CASE("symlinks store fast targets in the inode and slow ones in a block", "[ext4][image]") {
  MemoryImage image(16 * kMiB);
  ImageBuilder b(options(16 * kMiB, 1024, JournalKind::kNone), &image);
  const std::string fast_target = "short/target";
  const std::string slow_target(1023, 's');
  const std::uint32_t fast = b.add_symlink(ImageBuilder::kRoot, "fast", attributes(), fast_target);
  const std::uint32_t slow = b.add_symlink(ImageBuilder::kRoot, "slow", attributes(), slow_target);
  b.finish();
  const ext4::Inode f = read_inode(image, fast);
  CHECK((f.mode & ext4::kModeTypeMask) == ext4::kModeSymlink);
  CHECK(f.size == fast_target.size());
  CHECK(std::string(reinterpret_cast<const char*>(f.block.data()), fast_target.size()) == fast_target);
  CHECK((f.flags & ext4::kExtentsFl) == 0u);
  const ext4::Inode s = read_inode(image, slow);
  CHECK(s.size == 1023u);
  REQUIRE((s.flags & ext4::kExtentsFl) != 0u);
  const std::uint64_t blocks = image.size() / 1024;
  const std::vector<ext4::Extent> extents = ext4::read_extent_tree(s.block, image, 1024, blocks, 4);
  REQUIRE(extents.size() == 1u);
  CHECK(extents[0].length == 1u);
  std::vector<std::uint8_t> target(1024);
  image.read(extents[0].physical * 1024, target);
  CHECK(std::string(target.begin(), target.begin() + 1023) == slow_target);
  CHECK(target[1023] == 0);
}

}  // namespace ext4_image_test
