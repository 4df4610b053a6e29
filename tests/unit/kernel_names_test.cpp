// SPDX-License-Identifier: BSD-3-Clause
// What --kernel names, before anything is fetched: the names themselves,
// the archive's package records, the modules a kernel's soft dependencies
// add, and a kernel a developer built in a folder. The archive itself is
// the kernel test vm_kernels'.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "tests/support/temp_dir.h"
#include "tools/nvj/vm/debian_archive.h"
#include "tools/nvj/vm/guest_kernel.h"
#include "tools/nvj/vm/kernel_cache.h"
#include "tools/nvj/vm/kernel_name.h"

namespace kernel_names_test {

namespace fs = std::filesystem;
using namespace nvj::cli;

namespace {

using nvj::test::TempDir;
using nvj::test::write_file;

// A bzImage's setup header with `version` where the boot protocol says.
std::string fake_bzimage(const std::string& version) {
  std::string image(0x400, '\0');
  image.replace(0x202, 4, "HdrS");
  image[0x20e] = 0x00;
  image[0x20f] = 0x01;
  image.replace(0x300, version.size() + 1, version + " ");
  return image;
}

}  // namespace

TEST_CASE("a --kernel value names a file, a folder, a Debian suite or a package", "[vm][kernel]") {
  const KernelName file = parse_kernel_name("/boot/vmlinuz-6.1.0-56-amd64");
  CHECK(file.kind == KernelName::Kind::path);
  CHECK(file.path == "/boot/vmlinuz-6.1.0-56-amd64");
  const KernelName sid = parse_kernel_name("debian:sid");
  CHECK(sid.kind == KernelName::Kind::debian_suite);
  CHECK(sid.suite == "sid");
  CHECK(parse_kernel_name("debian:bookworm-backports").suite == "bookworm-backports");
  const KernelName pinned = parse_kernel_name("debian:linux-image-amd64=7.3~rc7-1~exp1");
  CHECK(pinned.kind == KernelName::Kind::debian_package);
  CHECK(pinned.package == "linux-image-amd64");
  CHECK(pinned.version == "7.3~rc7-1~exp1");
  const KernelName newest = parse_kernel_name("debian:linux-image-6.12.117+deb13-amd64");
  CHECK(newest.package == "linux-image-6.12.117+deb13-amd64");
  CHECK(newest.version.empty());
  CHECK(parse_kernel_name("debian:linux-image-amd64=1:2.0-1").version == "1:2.0-1");  // an epoch

  CHECK_THROWS_WITH(parse_kernel_name(""), "an empty kernel name");
  CHECK_THROWS_WITH(parse_kernel_name("debian:"), Catch::StartsWith("debian:: which suite or package?"));
  CHECK_THROWS_WITH(parse_kernel_name("debian:Sid"), Catch::Contains("'Sid' is no suite name"));
  CHECK_THROWS_WITH(parse_kernel_name("debian:linux-image-amd64="), Catch::Contains("which version, after '='?"));
  CHECK_THROWS_WITH(parse_kernel_name("debian:linux-image-amd64=x y"), Catch::Contains("'x y' is no package version"));
  CHECK_THROWS_WITH(parse_kernel_name("debian:linux_image=1"), Catch::Contains("'linux_image' is no package name"));

  const auto names = parse_kernel_names({"debian:sid,/k", "debian:trixie"});
  REQUIRE(names.size() == 3);
  CHECK(names[1].path == "/k");
  CHECK(names[2].suite == "trixie");
  CHECK_THROWS_WITH(parse_kernel_names({"debian:sid,"}), "an empty kernel name");
}

TEST_CASE("an apt-cache record: the fields a kernel's packages are found and checked by", "[vm][kernel]") {
  const auto r = parse_package_record(
      "Package: linux-image-7.3-amd64\n"
      "Source: linux-signed-amd64 (7.3~rc7+1~exp1)\n"
      "Version: 7.3~rc7-1~exp1\n"
      "Depends: dracut | initramfs-tools (>= 0.120+deb8u2) | linux-initramfs-tool, linux-base-7.3-amd64 (= 7.3~rc7-1~exp1), "
      "linux-binary-7.3-amd64 (= 7.3~rc7-1~exp1), linux-modules-7.3-amd64:any (= 7.3~rc7-1~exp1)\n"
      "Pre-Depends: linux-base (>= 4.17~)\n"
      "Description: Linux 7.3 for 64-bit PCs\n"
      " A continuation line: Depends: not-a-field\n"
      "Filename: pool/main/l/linux-signed-amd64/linux-image-7.3-amd64_7.3~rc7-1~exp1_amd64.deb\n"
      "Size: 1888\n"
      "SHA256: e57ad3989a2ddc38ed87ce8ba9bf949b8f487d3c5c3de7caa2ad500ffd3d6d27\n"
      "\n"
      "Package: another\nVersion: 1\n");
  REQUIRE(r);
  CHECK(r->package == "linux-image-7.3-amd64");
  CHECK(r->version == "7.3~rc7-1~exp1");
  CHECK(r->size == 1888);
  CHECK(r->sha256 == "e57ad3989a2ddc38ed87ce8ba9bf949b8f487d3c5c3de7caa2ad500ffd3d6d27");
  REQUIRE(r->depends.size() == 4);
  REQUIRE(r->depends[0].size() == 3);
  CHECK(r->depends[0][1].package == "initramfs-tools");
  CHECK(r->depends[0][1].relation == ">=");
  CHECK(r->depends[0][1].version == "0.120+deb8u2");
  CHECK(r->depends[2][0].package == "linux-binary-7.3-amd64");
  CHECK(r->depends[2][0].relation == "=");
  CHECK(r->depends[3][0].package == "linux-modules-7.3-amd64");  // ":any" dropped
  CHECK_FALSE(parse_package_record(""));
  CHECK_FALSE(parse_package_record("N: Unable to locate package x\n"));
}

TEST_CASE("soft dependencies: the generic module an alias names, optional, once", "[vm][kernel]") {
  TempDir tmp;
  // As Debian 12's 6.1: ext4 and jbd2 ask for crc32c through the crypto
  // API, which two modules provide; btrfs for one that is not there.
  write_file(tmp.path / "modules.dep",
             "kernel/fs/ext4/ext4.ko: kernel/lib/crc16.ko kernel/fs/jbd2/jbd2.ko\n"
             "kernel/lib/crc16.ko:\n"
             "kernel/fs/jbd2/jbd2.ko:\n"
             "kernel/arch/x86/crypto/crc32c-intel.ko:\n"
             "kernel/crypto/crc32c_generic.ko:\n"
             "kernel/fs/btrfs/btrfs.ko:\n"
             "kernel/crypto/needs-x.ko: kernel/crypto/x.ko\n"
             "kernel/crypto/x.ko:\n");
  write_file(tmp.path / "modules.builtin", "kernel/crypto/sha256_generic.ko\n");
  write_file(tmp.path / "modules.softdep",
             "# Soft dependencies extracted from modules themselves.\n"
             "softdep ext4 pre: crypto-crc32c\n"
             "softdep jbd2 pre: crypto-crc32c\n"
             "softdep btrfs pre: blake2b-256 pre: sha256 post: needs-x\n"
             "softdep crc16 pre: needs-x\n");
  write_file(tmp.path / "modules.alias",
             "alias crypto-crc32c crc32c_intel\n"
             "alias crypto-crc32c crc32c_generic\n"
             "alias crypto-sha256 sha256_generic\n"
             "alias sha256 sha256_generic\n");
  const auto order = resolve_modules(tmp.path, {"ext4", "btrfs", "x"});
  std::vector<std::string> names;
  for (const auto& m : order) names.push_back(m.name + (m.optional ? "?" : ""));
  // ext4's dependencies last to first (modules.dep's order, reversed, as
  // before), each after its soft ones: jbd2 after crc32c (the generic
  // one, optional); crc16's soft needs-x pulls x in optionally, and asked
  // for by name later x is needed after all. blake2b-256 is nowhere, sha256
  // built in, a post: dependency is not loaded first.
  CHECK(names == std::vector<std::string>{"crc32c_generic?", "jbd2", "x", "needs_x?", "crc16", "ext4", "btrfs"});
  CHECK(resolve_modules({}, {"ext4"}).empty());  // every driver built in
}

TEST_CASE("a kernel a developer built: its bzImage and modules_install's folder", "[vm][kernel]") {
  TempDir tmp;
  const fs::path tree = tmp.path / "linux";
  write_file(tree / "arch/x86/boot/bzImage", fake_bzimage("7.4.0-rc1-dirty"));
  // Without modules: its drivers are built in.
  GuestKernel k = kernel_in_folder(tree);
  CHECK(k.image == tree / "arch/x86/boot/bzImage");
  CHECK(k.version == "7.4.0-rc1-dirty");
  CHECK(k.modules.empty());
  // make modules_install INSTALL_MOD_PATH=DIR, depmod not run: said so.
  fs::create_directories(tree / "lib/modules/7.4.0-rc1-dirty");
  CHECK_THROWS_WITH(kernel_in_folder(tree), Catch::Contains("has no modules.dep (run depmod -b"));
  write_file(tree / "lib/modules/7.4.0-rc1-dirty/modules.dep", "");
  k = kernel_in_folder(tree);
  CHECK(k.modules == tree / "lib/modules/7.4.0-rc1-dirty");
  // An installed tree: boot/vmlinuz-VERSION and usr/lib/modules.
  const fs::path installed = tmp.path / "root";
  write_file(installed / "boot/vmlinuz-6.18.0", fake_bzimage("6.18.0"));
  write_file(installed / "usr/lib/modules/6.18.0/modules.dep", "");
  k = kernel_in_folder(installed);
  CHECK(k.version == "6.18.0");
  CHECK(k.modules == installed / "usr/lib/modules/6.18.0");
  CHECK_THROWS_WITH(kernel_in_folder(tmp.path / "empty"), Catch::Contains("no kernel in the folder"));

  // By name, through the same door nvj vm uses: a folder, its checksum.
  const GuestKernel named = named_kernel(tree.string(), "", "nvj vm");
  CHECK(named.name == tree.string());
  CHECK(named.image_sha256.size() == 64);
  CHECK(reproducible_name(named) == tree.string());
  CHECK_THROWS_WITH(named_kernel(tree.string(), "/m", "nvj vm"), Catch::Contains("--modules goes with a kernel's file"));
  CHECK_THROWS_WITH(named_kernel("debian:", "", "nvj vm"), Catch::StartsWith("nvj vm: --kernel debian:: which suite"));
}

TEST_CASE("a cached kernel's description reads back as it was written", "[vm][kernel]") {
  CachedKernel k;
  k.folder = "/c/kernels/linux-image-7.3-amd64_7.3~rc7-1~exp1";
  k.key = "linux-image-7.3-amd64_7.3~rc7-1~exp1";
  k.version = "7.3-amd64";
  k.image = k.folder / "root/usr/lib/modules/7.3-amd64/vmlinuz";
  k.modules = k.folder / "root/usr/lib/modules/7.3-amd64";
  k.image_sha256 = std::string(64, 'a');
  k.packages = {{"linux-image-amd64", "7.3~rc7-1~exp1", std::string(64, 'b'), 984}};
  k.suite = "experimental";
  k.archive = "http://deb.debian.org/debian";
  k.fetched = "2026-11-27T19:55:42Z";
  const nvj::Json j = cached_kernel_json(k);
  CHECK(j.at("image") == "root/usr/lib/modules/7.3-amd64/vmlinuz");  // relative: the cache can move
  const CachedKernel back = cached_kernel_from_json(j, k.folder, "kernel.json");
  CHECK(back.image == k.image);
  CHECK(back.modules == k.modules);
  CHECK(back.packages.front().size == 984);
  CHECK(back.key == k.key);
  CHECK_THROWS_WITH(cached_kernel_from_json(nvj::Json::object(), k.folder, "x.json"),
                    Catch::StartsWith("x.json: not a cached kernel's description"));
}

}  // namespace kernel_names_test
