// SPDX-License-Identifier: BSD-3-Clause
// nvj vm's pieces that need no VM: the initramfs's cpio format, the guest
// command's quoting, the console's markers, the kernel's modules in loading
// order, the kernel's version from its image, QEMU's command line and the
// power cut's answer.
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "tests/support/temp_dir.h"
#include "tools/nvj/host/files/text_file.h"
#include "tools/nvj/host/processes/process.h"
#include "tools/nvj/vm/cpio_writer.h"
#include "tools/nvj/vm/guest_console.h"
#include "tools/nvj/vm/guest_init.h"
#include "tools/nvj/vm/guest_kernel.h"
#include "tools/nvj/vm/guest_tools.h"
#include "tools/nvj/vm/initramfs.h"
#include "tools/nvj/vm/qemu.h"
#include "tools/nvj/vm/vm_session.h"

namespace vm_test {

namespace fs = std::filesystem;
using namespace nvj::cli;

namespace {

using nvj::test::TempDir;
using nvj::test::write_file;

struct CpioEntry {
  std::string name;
  unsigned long mode = 0, size = 0, rdev_major = 0, rdev_minor = 0;
  std::string data;
};

// A reader of what CpioWriter writes, from the format's description.
std::vector<CpioEntry> read_cpio(const std::string& bytes) {
  std::vector<CpioEntry> out;
  std::size_t at = 0;
  const auto field = [&](int i) { return std::stoul(bytes.substr(at + 6 + 8 * static_cast<std::size_t>(i), 8), nullptr, 16); };
  const auto align = [](std::size_t n) { return (n + 3) & ~std::size_t{3}; };
  for (;;) {
    REQUIRE(at + 110 <= bytes.size());
    REQUIRE(bytes.substr(at, 6) == "070701");
    CpioEntry e;
    e.mode = field(1);
    e.size = field(6);
    e.rdev_major = field(9);
    e.rdev_minor = field(10);
    const std::size_t name_size = field(11);
    e.name = bytes.substr(at + 110, name_size - 1);
    REQUIRE(bytes[at + 110 + name_size - 1] == '\0');
    at = align(at + 110 + name_size);
    e.data = bytes.substr(at, e.size);
    at = align(at + e.size);
    if (e.name == "TRAILER!!!") break;
    out.push_back(e);
  }
  CHECK(at == bytes.size());
  return out;
}

}  // namespace

TEST_CASE("the initramfs is a newc archive with files, links and device nodes", "[vm]") {
  TempDir tmp;
  CpioWriter w(tmp.path / "a.cpio");
  w.directory("bin");
  w.file("bin/hello", "abc", 0755);
  w.symlink("bin/sh", "busybox");
  w.char_device("dev/console", 5, 1);
  w.finish();
  const std::string bytes = read_text_file(tmp.path / "a.cpio");
  CHECK(bytes.size() == w.bytes());
  CHECK(bytes.size() % 4 == 0);
  const auto entries = read_cpio(bytes);
  REQUIRE(entries.size() == 4);
  CHECK(entries[0].name == "bin");
  CHECK(S_ISDIR(entries[0].mode));
  CHECK(entries[1].name == "bin/hello");
  CHECK(entries[1].mode == (S_IFREG | 0755));
  CHECK(entries[1].data == "abc");
  CHECK(S_ISLNK(entries[2].mode));
  CHECK(entries[2].data == "busybox");
  CHECK(S_ISCHR(entries[3].mode));
  CHECK(entries[3].rdev_major == 5);
  CHECK(entries[3].rdev_minor == 1);
}

TEST_CASE("the guest runs the command's words exactly as given", "[vm]") {
  CHECK(shell_quote("it's") == R"('it'\''s')");
  CHECK(shell_script({"sh", "-c", "echo hi; exit 3"}) == "exec 'sh' '-c' 'echo hi; exit 3'\n");
  CHECK_THROWS(shell_quote(std::string("a\0b", 3)));
  // Through a real shell: spaces, quotes, $, backslashes and newlines survive.
  TempDir tmp;
  write_file(tmp.path / "script", shell_script({"printf", "[%s]\\n", "a b", "it's", "$HOME", "\\n", "x\ny", ""}));
  const RunResult r = run({"sh", (tmp.path / "script").string()});
  CHECK(r.status == 0);
  CHECK(r.output == "[a b]\n[it's]\n[$HOME]\n[\\n]\n[x\ny]\n[]\n");

  GuestPlan plan;
  plan.token = "0123abcd";
  plan.journal = true;
  plan.mount_options = "data=journal";
  const std::string config = guest_config(plan);
  CHECK_THAT(config, Catch::Contains("NVJ_TOKEN='0123abcd'") && Catch::Contains("NVJ_JOURNAL=yes") &&
                         Catch::Contains("NVJ_MOUNT_OPTIONS='data=journal'") && Catch::Contains("NVJ_CRASH=no") &&
                         Catch::Contains("NVJ_FS='ext4'") && Catch::Contains("NVJ_DISKS=1"));
  plan.disks = 2;
  CHECK_THAT(guest_config(plan), Catch::Contains("NVJ_DISKS=2"));
  plan.filesystem = "xfs";
  CHECK_THAT(guest_config(plan), Catch::Contains("NVJ_FS='xfs'"));
  CHECK(guest_module_names("xfs").back() == "xfs");
  CHECK(guest_module_names("btrfs").back() == "btrfs");
  CHECK(guest_module_names().back() == "ext4");
  CHECK(guest_module_names("xfs", true).back() == "9p");
  CHECK_THAT(guest_config(plan), Catch::Contains("NVJ_HOST_ROOT=no"));
  plan.host_root = true;
  CHECK_THAT(guest_config(plan), Catch::Contains("NVJ_HOST_ROOT=yes"));
  CHECK(new_token().size() == 16);
  CHECK(new_token() != new_token());
  CHECK_THAT(guest_init_script(), Catch::StartsWith("#!/bin/busybox sh\n"));
}

TEST_CASE("the guest's /init is tools/nvj/vm/guest_init.sh, byte for byte", "[vm]") {
  std::ifstream in(std::string(NVJ_SOURCE_DIR) + "/tools/nvj/vm/guest_init.sh", std::ios::binary);
  REQUIRE(in);
  const std::string file((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(guest_init_script() == file);
  CHECK(file.size() > 4000);
}

TEST_CASE("the console splits into boot messages, markers and the command's output", "[vm]") {
  GuestConsole console("t0k3n");
  std::vector<ConsoleLine> lines;
  const auto feed = [&](const std::string& bytes) {
    for (auto& l : console.feed(bytes)) lines.push_back(l);
  };
  feed("[    0.000000] Linux version 6.1.0\r\nRun /init as init process\r\n");
  feed("nvj-vm:t0k3n:kernel [    5.000000] EXT4-fs (sda): recovery complete\r\n");
  feed("nvj-vm:t0k3n:kernel [    5.100000] EXT4-fs (sda): mounted filesystem with ordered data mode.\r\n");
  CHECK_FALSE(console.begun());
  feed("nvj-vm:t0k3n:begin command\r\nhel");  // a line in two pieces
  CHECK(console.begun());
  feed("lo\r\n\r[##..]  50%\r\x1b[Kwriters: done\r\n");
  feed("[    9.000000] blk_update_request: I/O error, dev sda\r\n");
  feed("nvj-vm:other:end 0\r\n");  // another run's token is only output
  feed("nvj-vm:t0k3n:end 3\r\n");
  CHECK(console.ended());
  CHECK(console.status() == 3);
  feed("nvj-vm:t0k3n:unmounted\r\nreboot: Power down\r\nno newline");
  for (auto& l : console.finish()) lines.push_back(l);
  CHECK(console.unmounted());
  CHECK(console.failure().empty());

  std::vector<std::string> output, kernel;
  for (const auto& l : lines) {
    if (l.kind == ConsoleLine::Kind::output) output.push_back(l.text);
    if (l.kind == ConsoleLine::Kind::kernel) kernel.push_back(l.text);
  }
  CHECK(output == std::vector<std::string>{"hello", "writers: done", "nvj-vm:other:end 0"});
  REQUIRE(kernel.size() == 1);
  CHECK(without_timestamp(kernel[0]) == "blk_update_request: I/O error, dev sda");
  CHECK(lines.front().kind == ConsoleLine::Kind::boot);
  CHECK(lines.back().text == "no newline");
  REQUIRE(console.filesystem_log().size() == 2);
  CHECK(journal_replay_line(console.filesystem_log()) == "EXT4-fs (sda): recovery complete");
  CHECK(journal_replay_line({"EXT4-fs (sda): mounted filesystem"}).empty());
  CHECK_THAT(console.tail(), Catch::Contains("reboot: Power down"));

  GuestConsole failing("x");
  failing.feed("nvj-vm:x:fail insmod ext4.ko\r\n");
  CHECK(failing.failure() == "insmod ext4.ko");
  CHECK_FALSE(failing.ended());
}

TEST_CASE("modules load after their dependencies, once, built-in ones left out", "[vm]") {
  TempDir tmp;
  write_file(tmp.path / "modules.dep",
             "kernel/fs/a.ko: kernel/lib/b.ko kernel/lib/c.ko.xz\n"
             "kernel/lib/b.ko: kernel/lib/c.ko.xz\n"
             "kernel/lib/c.ko.xz:\n"
             "kernel/drivers/d-x.ko:\n");
  write_file(tmp.path / "modules.builtin", "kernel/drivers/e.ko\n");
  const auto order = resolve_modules(tmp.path, {"a", "e", "d-x", "c"});
  std::vector<std::string> names;
  for (const auto& m : order) names.push_back(m.name);
  CHECK(names == std::vector<std::string>{"c", "b", "a", "d_x"});
  CHECK(order[0].file == tmp.path / "kernel/lib/c.ko.xz");
  CHECK_THROWS_WITH(resolve_modules(tmp.path, {"zz"}), Catch::Contains("kernel module zz is neither in"));
}

TEST_CASE("the kernel: its version from the image, the newest one with modules", "[vm]") {
  TempDir tmp;
  std::string image(0x400, '\0');
  image.replace(0x202, 4, "HdrS");
  image[0x20e] = 0x00;  // the version string at 0x200 + 0x100
  image[0x20f] = 0x01;
  image.replace(0x300, 40, "6.1.0-77-amd64 (debian-kernel@lists) #1");
  write_file(tmp.path / "boot" / "vmlinuz-test", image);
  CHECK(bzimage_version(tmp.path / "boot" / "vmlinuz-test") == "6.1.0-77-amd64");
  write_file(tmp.path / "boot" / "not-a-kernel", "hello");
  CHECK(bzimage_version(tmp.path / "boot" / "not-a-kernel").empty());

  CHECK_THROWS_WITH(given_kernel(tmp.path / "nonexistent"), Catch::Contains("nonexistent: no such file"));
  CHECK_THROWS_WITH(given_kernel(tmp.path / "boot" / "vmlinuz-test", tmp.path / "nomodules"),
                    Catch::Contains("nomodules is not a folder"));
  fs::create_directories(tmp.path / "mods");
  const GuestKernel k = given_kernel(tmp.path / "boot" / "vmlinuz-test", tmp.path / "mods");
  CHECK(k.version == "6.1.0-77-amd64");
  CHECK(k.modules == tmp.path / "mods");

  for (const char* v : {"5.10.0-30-amd64", "6.1.0-9-amd64", "6.1.0-10-amd64"}) write_file(tmp.path / "boot" / (std::string("vmlinuz-") + v), "x");
  fs::create_directories(tmp.path / "lib" / "5.10.0-30-amd64");
  fs::create_directories(tmp.path / "lib" / "6.1.0-9-amd64");
  // 6.1.0-10 has no modules: the newest that has is 6.1.0-9 (not by string order).
  const auto found = find_distribution_kernel(tmp.path / "boot", tmp.path / "lib");
  REQUIRE(found);
  CHECK(found->version == "6.1.0-9-amd64");
  CHECK(found->modules == tmp.path / "lib" / "6.1.0-9-amd64");
  CHECK_FALSE(find_distribution_kernel(tmp.path / "none", tmp.path / "lib"));
}

TEST_CASE("QEMU's command line: software emulation, the exports as SCSI disks saying what they are", "[vm]") {
  QemuConfig c;
  c.program = "qemu-system-x86_64";
  c.kernel = "/k";
  c.initrd = "/i";
  c.append = "console=ttyS0 panic=-1";
  c.memory_mib = 256;
  ExportTraits hdd;
  hdd.rotational = true;
  hdd.trim = false;
  hdd.physical_sector = 4096;
  ExportTraits nvram;
  nvram.write_back = false;
  nvram.fua = false;
  nvram.trim = false;
  ExportTraits ssd;
  ssd.logical_sector = 4096;
  ssd.physical_sector = 4096;
  c.drives = {NbdDrive{"/run/a,b.sock", "", "", "data", hdd}, NbdDrive{"/s", "", "", "journal", nvram}};
  c.console = "/c.log";
  const std::string line = quote(qemu_argv(c));
  CHECK_THAT(line, Catch::Contains("-accel tcg") && Catch::Contains("-no-reboot") && Catch::Contains("-m 256") &&
                       Catch::Contains("-kernel /k -initrd /i -append 'console=ttyS0 panic=-1'") &&
                       Catch::Contains("-serial file:/c.log"));
  // A comma in the socket's path is doubled, as QEMU's option syntax wants.
  CHECK_THAT(line, Catch::Contains("-device virtio-scsi-pci,id=nvjscsi -drive file.driver=nbd,file.server.type=unix,"
                                   "file.server.path=/run/a,,b.sock,file.export=data,format=raw,if=none,id=nvjdisk0,"
                                   "cache=none,discard=ignore"));
  CHECK_THAT(line, Catch::Contains("-device scsi-hd,bus=nvjscsi.0,channel=0,scsi-id=0,lun=0,drive=nvjdisk0,"
                                   "rotation_rate=7200,write-cache=on,dpofua=on,logical_block_size=512,physical_block_size=4096,"
                                   "discard_granularity=0"));
  CHECK_THAT(line, Catch::Contains("-drive file.driver=nbd,file.server.type=unix,file.server.path=/s,"
                                   "file.export=journal,format=raw,if=none,id=nvjdisk1,cache=none,discard=ignore"));
  CHECK_THAT(line, Catch::Contains("-device scsi-hd,bus=nvjscsi.0,channel=0,scsi-id=1,lun=0,drive=nvjdisk1,"
                                   "rotation_rate=1,write-cache=off,dpofua=off,logical_block_size=512,physical_block_size=512,"
                                   "discard_granularity=0"));
  // An export that trims: discards pass, the disk advertises them.
  c.drives = {NbdDrive{"/s", "", "", "data", ssd}};
  const std::string trims = quote(qemu_argv(c));
  CHECK_THAT(trims, Catch::Contains("id=nvjdisk0,cache=none,discard=unmap -device scsi-hd,"));
  CHECK(trims.ends_with("rotation_rate=1,write-cache=on,dpofua=on,logical_block_size=4096,physical_block_size=4096"));
  CHECK_THAT(trims, !Catch::Contains("discard_granularity"));
  CHECK_THAT(line, !Catch::Contains("virtio-9p"));
  // The host's root, read-only over virtio-9p.
  c.host_root = "/";
  CHECK_THAT(quote(qemu_argv(c)),
             Catch::Contains("-fsdev local,id=nvjroot,path=/,security_model=none,readonly=on,multidevs=remap "
                             "-device virtio-9p-pci,fsdev=nvjroot,mount_tag=nvjroot"));
}

TEST_CASE("the power cut's answer: writes lost over every export", "[vm]") {
  CHECK(writes_lost(R"({"policy":"all","exports":{"data":{"durable":3,"volatile_kept":0,"volatile_lost":586},)"
                    R"("journal":{"durable":9,"volatile_kept":0,"volatile_lost":2}}})") == 588);
  CHECK(writes_lost(R"({"exports":{}})") == -1);
  CHECK(writes_lost(R"({"exports":{"data":{"durable":3}}})") == -1);
  CHECK(writes_lost("Internal Server Error") == -1);
  CHECK(writes_lost(R"({"exports":{"data":{"volatile_lost":0}}})") == 0);
  CHECK_FALSE(is_static_executable("/proc/self/exe"));  // the test program is linked dynamically
  CHECK_FALSE(is_static_executable("/nonexistent"));
}

}  // namespace vm_test
