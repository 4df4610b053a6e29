// SPDX-License-Identifier: BSD-3-Clause
// identify_filesystem (fscore/fs_signature.h) on images the filesystems' own
// tools made: mke2fs (ext4, and ext3), mkfs.xfs with an internal log and
// with its log on another file, mkfs.btrfs; a blank image and one too small
// for a superblock hold none. e2fsprogs, xfsprogs and btrfs-progs must be
// installed (./run installs them).
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "fscore/ext4/image_builder.h"
#include "fscore/fs_signature.h"
#include "tests/support/sparse_image.h"
#include "tests/support/temp_dir.h"
#include "tools/nvj/host/files/file_image.h"
#include "tools/nvj/host/processes/process.h"

namespace fs_signature_test {

using fscore::FsKind;
using nvj::test::TempDir;

namespace {

fscore::FsSignature identify(const std::string& path) {
  const nvj::cli::FileImage file(path, nvj::cli::FileImage::Mode::read_only);
  return fscore::identify_filesystem(file);
}

// Makes `path` of `size` (sparse) and runs `mkfs` on it.
void make(const std::string& path, const std::string& size, std::vector<std::string> mkfs) {
  INFO(mkfs.front() << " must be installed");
  REQUIRE_FALSE(nvj::cli::which(mkfs.front()).empty());
  REQUIRE(nvj::cli::run({"truncate", "-s", size, path}).status == 0);
  mkfs.push_back(path);
  const auto r = nvj::cli::run(mkfs);
  INFO(nvj::cli::quote(mkfs) << ": " << r.output);
  REQUIRE(r.status == 0);
}

}  // namespace

TEST_CASE("identify_filesystem tells ext4, XFS and btrfs apart, and where the journal or log is", "[fs]") {
  TempDir dir;
  const std::string image = dir.file("image"), log = dir.file("log");
  for (const std::string type : {"ext4", "ext3"}) {
    CAPTURE(type);
    make(image, "64M", {"mke2fs", "-q", "-F", "-t", type});
    CHECK(identify(image).kind == FsKind::ext4);
    CHECK_FALSE(identify(image).external_log);
  }
  // ext4 with its journal on a device of its own (mke2fs wants a block
  // device for that: fscore's builder, as the server makes it).
  {
    nvj::test::SparseImage built(64u << 20);
    fscore::ext4::ImageOptions o;
    o.device_bytes = 64u << 20;
    o.journal = fscore::ext4::JournalKind::kExternal;
    o.external_journal_uuid = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
    o.uuid = {9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9};
    fscore::ext4::ImageBuilder(o, &built).finish();
    CHECK(fscore::identify_filesystem(built).kind == FsKind::ext4);
    CHECK(fscore::identify_filesystem(built).external_log);
  }
  make(image, "64M", {"mke2fs", "-q", "-F", "-t", "ext2"});  // no journal at all
  CHECK_FALSE(identify(image).external_log);
  make(image, "512M", {"mkfs.xfs", "-q", "-f"});
  const auto internal = identify(image);
  CHECK(internal.kind == FsKind::xfs);
  CHECK_FALSE(internal.external_log);
  REQUIRE(nvj::cli::run({"truncate", "-s", "64M", log}).status == 0);
  make(image, "512M", {"mkfs.xfs", "-q", "-f", "-l", "logdev=" + log});
  const auto external = identify(image);
  CHECK(external.kind == FsKind::xfs);
  CHECK(external.external_log);
  CHECK(identify(log).kind == FsKind::unknown);  // the log itself is no filesystem
  make(image, "256M", {"mkfs.btrfs", "-q", "-f"});
  CHECK(identify(image).kind == FsKind::btrfs);
  CHECK(std::string(fscore::to_string(FsKind::btrfs)) == "btrfs");

  const std::string blank = dir.file("blank"), tiny = dir.file("tiny");
  REQUIRE(nvj::cli::run({"truncate", "-s", "1M", blank}).status == 0);
  CHECK(identify(blank).kind == FsKind::unknown);
  REQUIRE(nvj::cli::run({"truncate", "-s", "100", tiny}).status == 0);
  CHECK(identify(tiny).kind == FsKind::unknown);
}

}  // namespace fs_signature_test
