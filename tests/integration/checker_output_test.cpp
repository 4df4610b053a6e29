// SPDX-License-Identifier: BSD-3-Clause
// What the crash lab reads in the checkers' output (tools/nvj/host/
// filesystem_tools.h), on e2fsck's own runs where they can be made here and
// on lines e2fsck 1.47 printed where they cannot (an external journal's
// hint needs a block device with the journal's UUID):
//   - a clean check finds nothing; a damaged one names its first findings,
//     without the pass headers, the summary, or the hint;
//   - the orphan list released by e2fsck -E journal_only -y is no damage,
//     and neither are the superblock's free counts a whole run then fixes;
//     a group's counts, an inode's fields are.
#include <catch2/catch.hpp>

#include <fstream>
#include <string>

#include "tests/support/temp_dir.h"
#include "tools/nvj/host/fs_tools/filesystem_tools.h"
#include "tools/nvj/host/processes/process.h"

namespace checker_output_test {

using nvj::test::TempDir;

namespace {

// An ext4 image whose orphan list holds a file with no links left: what a
// crash between an unlink and the inode's release leaves.
std::string image_with_an_orphan(const TempDir& dir) {
  const std::string image = dir.file("img");
  REQUIRE(nvj::cli::run({"mke2fs", "-q", "-F", "-t", "ext4", image, "64M"}).status == 0);
  std::ofstream(dir.file("hello")) << "hello\n";
  std::ofstream(dir.file("script")) << "write " << dir.file("hello") << " f\nunlink f\nsif <12> links_count 0\nssv last_orphan 12\n";
  REQUIRE(nvj::cli::run({"debugfs", "-w", "-f", dir.file("script"), image}).status == 0);
  return image;
}

}  // namespace

TEST_CASE("the orphan list released as a mount releases it is no damage; damage e2fsck finds is named", "[fsck]") {
  TempDir dir;
  const std::string image = image_with_an_orphan(dir);
  const auto unreleased = nvj::cli::run({"e2fsck", "-fn", image});
  CHECK(nvj::cli::checker_finds_damage(unreleased.status, unreleased.output));  // a list left is damage to -n
  const auto released = nvj::cli::run({"e2fsck", "-y", "-E", "journal_only", image});
  CHECK(released.status == 0);
  CHECK(released.output.find("Clearing orphaned inode 12") != std::string::npos);
  CHECK(nvj::cli::repair_findings(released.output, 6).empty());
  const auto clean = nvj::cli::run({"e2fsck", "-fn", image});
  CHECK_FALSE(nvj::cli::checker_finds_damage(clean.status, clean.output));
  CHECK(nvj::cli::checker_findings(clean.output, 6).empty());

  // A link count made wrong: found, and named first.
  std::ofstream(dir.file("script2")) << "mkdir d\nsif d links_count 7\n";
  REQUIRE(nvj::cli::run({"debugfs", "-w", "-f", dir.file("script2"), image}).status == 0);
  const auto damaged = nvj::cli::run({"e2fsck", "-fn", image});
  CHECK(nvj::cli::checker_finds_damage(damaged.status, damaged.output));
  CHECK_THAT(nvj::cli::checker_findings(damaged.output, 6), Catch::StartsWith("Inode 12 ref count is 7, should be 2."));
  const auto repaired = nvj::cli::run({"e2fsck", "-fy", image});
  CHECK(repaired.status == 1);
  CHECK_THAT(nvj::cli::repair_findings(repaired.output, 6), Catch::StartsWith("Inode 12 ref count is 7, should be 2."));
}

TEST_CASE("e2fsck's external journal hint is no damage, alone or before what a whole run fixes", "[fsck]") {
  // e2fsck 1.47's words where this machine had a device with the journal's
  // UUID: -fn exits 4 for the hint alone; -y -E journal_only fixes it and
  // goes on to a whole check, which fixes the superblock's free counts.
  const std::string hint_only =
      "e2fsck 1.47.0 (5-Feb-2023)\nSuperblock hint for external superblock should be 0x701.  Fix? no\n\n"
      "Pass 1: Checking inodes, blocks, and sizes\nPass 2: Checking directory structure\n"
      "Pass 3: Checking directory connectivity\nPass 4: Checking reference counts\n"
      "Pass 5: Checking group summary information\n\n"
      "data.img: ********** WARNING: Filesystem still has errors **********\n\n"
      "data.img: 13/65536 files (0.0% non-contiguous), 16495/262144 blocks\n";
  CHECK_FALSE(nvj::cli::checker_finds_damage(4, hint_only));
  CHECK(nvj::cli::checker_finds_damage(8, hint_only));  // an operational error is never let through
  CHECK(nvj::cli::checker_findings("e2fsck 1.47.0 (5-Feb-2023)\ne2fsck: Group descriptors look bad... trying backup blocks...\n", 6) ==
        "e2fsck: Group descriptors look bad... trying backup blocks...");  // the banner goes, e2fsck's own words stay
  const std::string orphan_then_whole =
      "e2fsck 1.47.0 (5-Feb-2023)\nSuperblock hint for external superblock should be 0x701.  Fix? yes\n\n"
      "Clearing orphaned inode 32820 (uid=0, gid=0, mode=0100644, size=10418)\n"
      "Pass 1: Checking inodes, blocks, and sizes\nPass 5: Checking group summary information\n"
      "Free blocks count wrong (245669, counted=245380).\nFix? yes\n\n"
      "Free inodes count wrong (65526, counted=65474).\nFix? yes\n\n\n"
      "data.img: ***** FILE SYSTEM WAS MODIFIED *****\n"
      "data.img: 62/65536 files (1.6% non-contiguous), 16764/262144 blocks\n";
  CHECK(nvj::cli::repair_findings(orphan_then_whole, 6).empty());
  const std::string group_counts = orphan_then_whole + "Free blocks count wrong for group #1 (100, counted=90).\nFix? yes\n";
  CHECK(nvj::cli::repair_findings(group_counts, 6) == "Free blocks count wrong for group #1 (100, counted=90).; Fix? yes");
}

}  // namespace checker_output_test
