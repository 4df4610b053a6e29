// SPDX-License-Identifier: BSD-3-Clause
// On-disk records of ext4 in fscore: the superblock, group descriptors and
// inodes, each encoded and decoded back.
#include <catch2/catch.hpp>

#include <array>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "fscore/crc32c.h"
#include "fscore/endian.h"
#include "fscore/ext4/features.h"
#include "fscore/ext4/group_desc.h"
#include "fscore/ext4/inode.h"
#include "fscore/ext4/superblock.h"
#include "fscore/uuid.h"

namespace ext4_format_test {

using fscore::Uuid;
using fscore::ext4::GroupDesc;
using fscore::ext4::Inode;
using fscore::ext4::Superblock;
using fscore::ext4::Timestamp;

namespace {

namespace ext4 = fscore::ext4;

using SuperBytes = std::array<std::uint8_t, 1024>;

Uuid uuid_of(std::uint8_t first) {
  Uuid u{};
  for (std::size_t i = 0; i < u.size(); ++i) u[i] = static_cast<std::uint8_t>(first + 17 * i);
  return u;
}

std::uint32_t seed_of(const Uuid& u) { return fscore::crc32c(~0u, u.data(), u.size()); }

// A superblock of a 4 KiB-block filesystem larger than 2^32 blocks, with
// every field this project encodes set to something recognisable.
Superblock big_superblock() {
  Superblock sb;
  sb.log_block_size = 2;
  sb.first_data_block = 0;
  sb.blocks_per_group = 32768;
  sb.inodes_per_group = 8192;
  sb.blocks_count = (std::uint64_t{1} << 33) + 12345;  // needs the high half
  const std::uint64_t groups = (sb.blocks_count + sb.blocks_per_group - 1) / sb.blocks_per_group;
  sb.inodes_count = static_cast<std::uint32_t>(groups * sb.inodes_per_group);
  sb.reserved_blocks = (std::uint64_t{3} << 32) + 77;
  sb.free_blocks = (std::uint64_t{5} << 32) + 99;
  sb.free_inodes = 123456789;
  sb.mount_time = 1700000001;
  sb.write_time = 1700000002;
  sb.state = 1;
  sb.errors = 2;
  sb.last_check = 1700000003;
  sb.rev_level = 1;
  sb.first_ino = 11;
  sb.inode_size = 256;
  sb.block_group_nr = 3;
  sb.feature_compat = ext4::kDefaultCompat | ext4::compat::kHasJournal;
  sb.feature_incompat = ext4::kDefaultIncompat;
  sb.feature_ro_compat = ext4::kDefaultRoCompat;
  sb.uuid = uuid_of(1);
  sb.volume_name = "sixteen-bytes-ok";
  sb.journal_uuid = uuid_of(100);
  sb.journal_inum = 8;
  sb.journal_dev = 0x0801;
  sb.hash_seed = {0x11111111u, 0x22222222u, 0x33333333u, 0x44444444u};
  sb.def_hash_version = 1;
  sb.jnl_backup_type = 1;
  sb.desc_size = 64;
  sb.default_mount_opts = ext4::kMountOptsUserXattrAcl;
  sb.mkfs_time = 1700000004;
  for (std::size_t i = 0; i < sb.jnl_blocks.size(); ++i) sb.jnl_blocks[i] = static_cast<std::uint32_t>(0x01000000u * i + 7);
  sb.min_extra_isize = 32;
  sb.want_extra_isize = 32;
  sb.flags = ext4::kFlagsSignedHash;
  sb.log_groups_per_flex = 4;
  sb.checksum_type = 1;
  return sb;
}

SuperBytes encode(const Superblock& sb) {
  SuperBytes bytes{};
  ext4::encode_superblock(sb, bytes);
  return bytes;
}

Superblock decode(const SuperBytes& bytes) { return ext4::decode_superblock(bytes); }

void check_same(const Superblock& a, const Superblock& b) {
  CHECK(a.inodes_count == b.inodes_count);
  CHECK(a.blocks_count == b.blocks_count);
  CHECK(a.reserved_blocks == b.reserved_blocks);
  CHECK(a.free_blocks == b.free_blocks);
  CHECK(a.free_inodes == b.free_inodes);
  CHECK(a.first_data_block == b.first_data_block);
  CHECK(a.log_block_size == b.log_block_size);
  CHECK(a.blocks_per_group == b.blocks_per_group);
  CHECK(a.inodes_per_group == b.inodes_per_group);
  CHECK(a.mount_time == b.mount_time);
  CHECK(a.write_time == b.write_time);
  CHECK(a.state == b.state);
  CHECK(a.errors == b.errors);
  CHECK(a.last_check == b.last_check);
  CHECK(a.rev_level == b.rev_level);
  CHECK(a.first_ino == b.first_ino);
  CHECK(a.inode_size == b.inode_size);
  CHECK(a.block_group_nr == b.block_group_nr);
  CHECK(a.feature_compat == b.feature_compat);
  CHECK(a.feature_incompat == b.feature_incompat);
  CHECK(a.feature_ro_compat == b.feature_ro_compat);
  CHECK(a.uuid == b.uuid);
  CHECK(a.volume_name == b.volume_name);
  CHECK(a.journal_uuid == b.journal_uuid);
  CHECK(a.journal_inum == b.journal_inum);
  CHECK(a.journal_dev == b.journal_dev);
  CHECK(a.hash_seed == b.hash_seed);
  CHECK(a.def_hash_version == b.def_hash_version);
  CHECK(a.jnl_backup_type == b.jnl_backup_type);
  CHECK(a.desc_size == b.desc_size);
  CHECK(a.default_mount_opts == b.default_mount_opts);
  CHECK(a.mkfs_time == b.mkfs_time);
  CHECK(a.jnl_blocks == b.jnl_blocks);
  CHECK(a.min_extra_isize == b.min_extra_isize);
  CHECK(a.want_extra_isize == b.want_extra_isize);
  CHECK(a.flags == b.flags);
  CHECK(a.log_groups_per_flex == b.log_groups_per_flex);
  CHECK(a.checksum_type == b.checksum_type);
  CHECK(a.checksum_seed == b.checksum_seed);
}

bool same_time(const Timestamp& a, const Timestamp& b) { return a.sec == b.sec && a.nsec == b.nsec; }

}  // namespace

// ---------------------------------------------------------------- superblock

TEST_CASE("ext4 superblock round trips every field with 64-bit block counts", "[ext4][superblock]") {
  const Superblock sb = big_superblock();
  const SuperBytes bytes = encode(sb);
  CHECK(fscore::load_le<std::uint16_t>(bytes.data() + 0x38) == ext4::kSuperMagic);
  // The high halves live at 0x150.. only because the 64bit feature is on.
  CHECK(fscore::load_le<std::uint32_t>(bytes.data() + 0x150) == 2u);
  CHECK(fscore::load_le<std::uint32_t>(bytes.data() + 0x154) == 3u);
  CHECK(fscore::load_le<std::uint32_t>(bytes.data() + 0x158) == 5u);
  const Superblock back = decode(bytes);
  CHECK(back.magic == ext4::kSuperMagic);
  check_same(sb, back);
  CHECK(back.block_size() == 4096u);
  CHECK(back.has_metadata_csum());
}

TEST_CASE("ext4 superblock stores its crc32c checksum in the last four bytes", "[ext4][superblock]") {
  const SuperBytes bytes = encode(big_superblock());
  CHECK(fscore::load_le<std::uint32_t>(bytes.data() + 0x3FC) == ext4::superblock_checksum(bytes));
  CHECK(ext4::superblock_checksum(bytes) == fscore::crc32c(~0u, bytes.data(), 0x3FC));
}

TEST_CASE("ext4 superblock without metadata_csum has no checksum and survives edits", "[ext4][superblock]") {
  Superblock sb = big_superblock();
  sb.feature_ro_compat &= ~ext4::ro_compat::kMetadataCsum;
  SuperBytes bytes = encode(sb);
  CHECK(fscore::load_le<std::uint32_t>(bytes.data() + 0x3FC) == 0u);
  bytes[0x78] = 'X';  // the volume name's first byte
  const Superblock back = decode(bytes);
  CHECK(back.volume_name == "Xixteen-bytes-ok");
}

TEST_CASE("ext4 superblock without the 64bit feature keeps only the low halves", "[ext4][superblock]") {
  Superblock sb = big_superblock();
  sb.feature_incompat &= ~ext4::incompat::k64bit;
  sb.blocks_count = 1000000;
  sb.inodes_count = static_cast<std::uint32_t>((1000000 + 32767) / 32768 * 8192);
  sb.reserved_blocks = (std::uint64_t{1} << 32) + 50000;
  sb.free_blocks = (std::uint64_t{1} << 32) + 60000;
  const SuperBytes bytes = encode(sb);
  CHECK(fscore::load_le<std::uint32_t>(bytes.data() + 0x150) == 0u);
  CHECK(fscore::load_le<std::uint32_t>(bytes.data() + 0x154) == 0u);
  const Superblock back = decode(bytes);
  CHECK(back.blocks_count == 1000000u);
  CHECK(back.reserved_blocks == 50000u);
  CHECK(back.free_blocks == 60000u);
}

TEST_CASE("ext4 superblock keeps the checksum seed only with the csum_seed feature", "[ext4][superblock]") {
  Superblock sb = big_superblock();
  sb.checksum_seed = 0xCAFEF00Du;
  CHECK(decode(encode(sb)).checksum_seed == 0u);
  sb.feature_incompat |= 0x2000u;  // csum_seed
  CHECK(decode(encode(sb)).checksum_seed == 0xCAFEF00Du);
}

TEST_CASE("ext4 superblock checksum catches any flipped byte", "[ext4][superblock]") {
  const SuperBytes good = encode(big_superblock());
  REQUIRE_NOTHROW(decode(good));
  // Flip one byte in each of several fields and in the padding: none of the
  // copies decodes.
  for (const std::size_t at : {std::size_t{0x00}, std::size_t{0x04}, std::size_t{0x68}, std::size_t{0x78},
                               std::size_t{0x150}, std::size_t{0x200}, std::size_t{0x3FB}, std::size_t{0x3FC}}) {
    SuperBytes bad = good;
    bad[at] ^= 0x01;
    CAPTURE(at);
    CHECK_THROWS_AS(decode(bad), std::runtime_error);
  }
}

TEST_CASE("ext4 superblock decoding rejects what is not ext4 or makes no sense", "[ext4][superblock]") {
  SuperBytes zero{};
  CHECK_THROWS_WITH(decode(zero), Catch::Contains("magic"));

  auto rejects = [](Superblock sb, const char* what) {
    CAPTURE(what);
    CHECK_THROWS_AS(decode(encode(sb)), std::runtime_error);
  };
  Superblock sb = big_superblock();
  REQUIRE_NOTHROW(decode(encode(sb)));
  sb.checksum_type = 2;
  rejects(sb, "unknown checksum type");
  sb = big_superblock();
  sb.rev_level = 0;
  rejects(sb, "revision 0");
  sb = big_superblock();
  sb.log_block_size = 7;
  rejects(sb, "block size 128 KiB");
  sb = big_superblock();
  sb.blocks_per_group = 0;
  rejects(sb, "no blocks per group");
  sb = big_superblock();
  sb.blocks_per_group = 8 * 4096 + 8;
  rejects(sb, "more blocks per group than a bitmap holds");
  sb = big_superblock();
  sb.inodes_per_group = 0;
  rejects(sb, "no inodes per group");
  sb = big_superblock();
  sb.inode_size = 384;
  rejects(sb, "inode size not a power of two");
  sb = big_superblock();
  sb.inode_size = 64;
  rejects(sb, "inode size below 128");
  sb = big_superblock();
  sb.first_data_block = 1;
  rejects(sb, "first data block 1 with 4 KiB blocks");
  sb = big_superblock();
  sb.desc_size = 48;
  rejects(sb, "descriptor size not a power of two");
  sb = big_superblock();
  sb.inodes_count += 8;
  rejects(sb, "inode count not groups times inodes per group");
  sb = big_superblock();
  sb.blocks_count = 0;
  rejects(sb, "no blocks");
}

TEST_CASE("ext4 superblock of a journal device decodes without group checks", "[ext4][superblock]") {
  Superblock sb;
  sb.feature_incompat = ext4::incompat::kJournalDev;
  sb.log_block_size = 0;
  sb.first_data_block = 1;
  sb.blocks_count = 4096;
  sb.blocks_per_group = 8192;
  sb.inodes_per_group = 0;  // a journal device has no inodes
  sb.uuid = uuid_of(9);
  const Superblock back = decode(encode(sb));
  CHECK(back.blocks_count == 4096u);
  CHECK(back.uuid == sb.uuid);
  CHECK((back.feature_incompat & ext4::incompat::kJournalDev) != 0);
}

// ---------------------------------------------------------- group descriptor

TEST_CASE("ext4 group descriptor round trips 64-bit locations and 32-bit counts", "[ext4][group_desc]") {
  GroupDesc d;
  d.block_bitmap = (std::uint64_t{0x12} << 32) + 0x345678;
  d.inode_bitmap = (std::uint64_t{0x9A} << 32) + 0xBCDEF0;
  d.inode_table = (std::uint64_t{0xFFFF} << 32) + 0x1000;
  d.free_blocks = 0x12345;  // more than 16 bits
  d.free_inodes = 0x23456;
  d.used_dirs = 0x34567;
  d.flags = ext4::kBgInodeZeroed | ext4::kBgBlockUninit;
  d.block_bitmap_csum = 0xDEADBEEF;
  d.inode_bitmap_csum = 0xFEEDFACE;
  d.itable_unused = 0x45678;
  const std::uint32_t seed = seed_of(uuid_of(3));
  std::vector<std::uint8_t> bytes(64, 0xAA);
  ext4::encode_group_desc(d, 17, seed, true, bytes);
  const GroupDesc back = ext4::decode_group_desc(bytes);
  CHECK(back.block_bitmap == d.block_bitmap);
  CHECK(back.inode_bitmap == d.inode_bitmap);
  CHECK(back.inode_table == d.inode_table);
  CHECK(back.free_blocks == d.free_blocks);
  CHECK(back.free_inodes == d.free_inodes);
  CHECK(back.used_dirs == d.used_dirs);
  CHECK(back.flags == d.flags);
  CHECK(back.block_bitmap_csum == d.block_bitmap_csum);
  CHECK(back.inode_bitmap_csum == d.inode_bitmap_csum);
  CHECK(back.itable_unused == d.itable_unused);
  CHECK(ext4::group_desc_checksum_ok(bytes, 17, seed));
  CHECK_FALSE(ext4::group_desc_checksum_ok(bytes, 18, seed));  // the group number is in the checksum
  CHECK_FALSE(ext4::group_desc_checksum_ok(bytes, 17, seed + 1));
  for (std::size_t at = 0; at < bytes.size(); at += 5) {
    std::vector<std::uint8_t> bad = bytes;
    bad[at] ^= 0x80;
    CAPTURE(at);
    CHECK_FALSE(ext4::group_desc_checksum_ok(bad, 17, seed));
  }
}

TEST_CASE("ext4 group descriptor of 32 bytes keeps the low halves only", "[ext4][group_desc]") {
  GroupDesc d;
  d.block_bitmap = (std::uint64_t{1} << 32) + 100;
  d.inode_bitmap = 101;
  d.inode_table = 102;
  d.free_blocks = 0x10005;
  d.free_inodes = 7;
  const std::uint32_t seed = seed_of(uuid_of(4));
  std::vector<std::uint8_t> bytes(32);
  ext4::encode_group_desc(d, 0, seed, true, bytes);
  const GroupDesc back = ext4::decode_group_desc(bytes);
  CHECK(back.block_bitmap == 100u);
  CHECK(back.inode_bitmap == 101u);
  CHECK(back.inode_table == 102u);
  CHECK(back.free_blocks == 5u);
  CHECK(back.free_inodes == 7u);
  CHECK(ext4::group_desc_checksum_ok(bytes, 0, seed));
}

TEST_CASE("ext4 group descriptor without metadata_csum leaves the checksum zero", "[ext4][group_desc]") {
  GroupDesc d;
  d.inode_table = 5;
  std::vector<std::uint8_t> bytes(64, 0xFF);
  ext4::encode_group_desc(d, 2, 1234, false, bytes);
  CHECK(fscore::load_le<std::uint16_t>(bytes.data() + 0x1E) == 0u);
  CHECK(ext4::decode_group_desc(bytes).inode_table == 5u);
}

TEST_CASE("ext4 bitmap checksum is crc32c of the bitmap from the filesystem seed", "[ext4][group_desc]") {
  std::vector<std::uint8_t> bitmap(1024);
  for (std::size_t i = 0; i < bitmap.size(); ++i) bitmap[i] = static_cast<std::uint8_t>(i * 13);
  const std::uint32_t seed = seed_of(uuid_of(5));
  CHECK(ext4::bitmap_checksum(seed, bitmap) == fscore::crc32c(seed, bitmap.data(), bitmap.size()));
  const std::uint32_t whole = ext4::bitmap_checksum(seed, bitmap);
  bitmap[512] ^= 1;
  CHECK(ext4::bitmap_checksum(seed, bitmap) != whole);
}

// --------------------------------------------------------------------- inode

TEST_CASE("ext4 inode round trips ids sizes block counts and i_block", "[ext4][inode]") {
  Inode n;
  n.mode = static_cast<std::uint16_t>(ext4::kModeRegular | 0640);
  n.uid = 0x00123456;  // above 16 bits: the high half goes to l_i_uid_high
  n.gid = 0x00ABCDEF;
  n.size = (std::uint64_t{7} << 32) + 12345;
  n.links = 3;
  n.blocks_512 = (std::uint64_t{0x1234} << 32) + 0x89ABCDEF;  // 48 bits
  n.flags = ext4::kExtentsFl;
  for (std::size_t i = 0; i < n.block.size(); ++i) n.block[i] = static_cast<std::uint8_t>(200 - i);
  n.generation = 0x5EED5EED;
  n.dtime = 0;
  n.atime = {1700000000, 1};
  n.ctime = {1700000001, 2};
  n.mtime = {1700000002, 3};
  n.crtime = {1700000003, 4};
  const std::uint32_t seed = seed_of(uuid_of(6));
  std::vector<std::uint8_t> raw(256, 0xCC);
  ext4::encode_inode(n, 4242, seed, raw);
  const Inode back = ext4::decode_inode(raw);
  CHECK(back.mode == n.mode);
  CHECK(back.uid == n.uid);
  CHECK(back.gid == n.gid);
  CHECK(back.size == n.size);
  CHECK(back.links == n.links);
  CHECK(back.blocks_512 == n.blocks_512);
  CHECK(back.flags == n.flags);
  CHECK(back.block == n.block);
  CHECK(back.generation == n.generation);
  CHECK(back.extra_isize == 32);
  CHECK(same_time(back.atime, n.atime));
  CHECK(same_time(back.ctime, n.ctime));
  CHECK(same_time(back.mtime, n.mtime));
  CHECK(same_time(back.crtime, n.crtime));
  CHECK(ext4::inode_checksum_ok(raw, 4242, seed));
}

TEST_CASE("ext4 inode keeps nanoseconds and times before 1970 and after 2038", "[ext4][inode]") {
  const std::uint32_t seed = seed_of(uuid_of(7));
  const std::vector<Timestamp> times = {
      {0, 0},
      {-1000, 5},                                          // before 1970
      {-(std::int64_t{1} << 31), 999999999},               // the oldest 32-bit time
      {(std::int64_t{1} << 31) - 1, 123456789},            // 2038-01-19, the last 32-bit second
      {std::int64_t{1} << 31, 1},                          // one second later
      {(std::int64_t{1} << 31) + 86400 * 365, 500000000},  // 2039
      {(std::int64_t{1} << 33) + 5, 42},                   // year 2242: epoch bits 2
      {(std::int64_t{3} << 32) + (std::int64_t{1} << 31) - 1, 999999999},  // the last time ext4 holds (2446)
  };
  for (const Timestamp& t : times) {
    CAPTURE(t.sec, t.nsec);
    Inode n;
    n.mode = static_cast<std::uint16_t>(ext4::kModeDir | 0755);
    n.atime = t;
    n.mtime = {t.sec, t.nsec / 2};
    n.ctime = {t.sec, 0};
    n.crtime = t;
    std::vector<std::uint8_t> raw(256);
    ext4::encode_inode(n, 2, seed, raw);
    const Inode back = ext4::decode_inode(raw);
    CHECK(same_time(back.atime, n.atime));
    CHECK(same_time(back.mtime, n.mtime));
    CHECK(same_time(back.ctime, n.ctime));
    CHECK(same_time(back.crtime, n.crtime));
  }
}

TEST_CASE("ext4 inode of 128 bytes keeps whole seconds only", "[ext4][inode]") {
  Inode n;
  n.mode = static_cast<std::uint16_t>(ext4::kModeRegular | 0600);
  n.atime = {1600000000, 77};
  n.mtime = {-5, 0};
  n.ctime = {1234, 5};
  std::vector<std::uint8_t> raw(128);
  ext4::encode_inode(n, 12, 99, raw);
  const Inode back = ext4::decode_inode(raw);
  CHECK(back.extra_isize == 0);
  CHECK(back.atime.sec == 1600000000);
  CHECK(back.atime.nsec == 0u);
  CHECK(back.mtime.sec == -5);
  CHECK(back.ctime.sec == 1234);
  CHECK(ext4::inode_checksum_ok(raw, 12, 99));
}

TEST_CASE("ext4 inode checksum fails after a flipped byte or for another inode number", "[ext4][inode]") {
  Inode n;
  n.mode = static_cast<std::uint16_t>(ext4::kModeRegular | 0644);
  n.size = 4096;
  n.links = 1;
  n.generation = 77;
  const std::uint32_t seed = seed_of(uuid_of(8));
  std::vector<std::uint8_t> raw(256);
  ext4::encode_inode(n, 100, seed, raw);
  REQUIRE(ext4::inode_checksum_ok(raw, 100, seed));
  CHECK_FALSE(ext4::inode_checksum_ok(raw, 101, seed));
  CHECK_FALSE(ext4::inode_checksum_ok(raw, 100, seed ^ 1));
  // Every byte counts, in the base inode, the extra fields and beyond them.
  for (std::size_t at = 0; at < raw.size(); at += 7) {
    std::vector<std::uint8_t> bad = raw;
    bad[at] ^= 0x10;
    CAPTURE(at);
    CHECK_FALSE(ext4::inode_checksum_ok(bad, 100, seed));
  }
}

TEST_CASE("ext4 device numbers use the old form when they fit a byte each", "[ext4][inode]") {
  std::array<std::uint8_t, 60> block{};
  block.fill(0xEE);
  ext4::encode_device_number(8, 1, block);
  CHECK(fscore::load_le<std::uint32_t>(block.data()) == 0x0801u);
  CHECK(fscore::load_le<std::uint32_t>(block.data() + 4) == 0u);
  CHECK(block[59] == 0);  // the rest is cleared
  ext4::encode_device_number(259, 0x12345, block);
  CHECK(fscore::load_le<std::uint32_t>(block.data()) == 0u);
  // new_encode_dev: minor low byte, major << 8, minor's upper bits << 12.
  CHECK(fscore::load_le<std::uint32_t>(block.data() + 4) == (0x45u | (259u << 8) | (0x12300u << 12)));
}

}  // namespace ext4_format_test
