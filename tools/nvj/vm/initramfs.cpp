// SPDX-License-Identifier: BSD-3-Clause
#include "tools/nvj/vm/initramfs.h"

#include <set>
#include <stdexcept>

#include "tools/nvj/host/files/text_file.h"
#include "tools/nvj/vm/cpio_writer.h"

namespace nvj::cli {
namespace {

std::string program_bytes(const std::string& path) {
  std::string bytes = read_text_file(path);
  if (bytes.empty()) throw std::runtime_error("cannot read " + path);
  return bytes;
}

}  // namespace

std::vector<std::string> guest_module_names(const std::string& filesystem, bool host_root, bool nbd) {
  // virtio_pci's own helpers (virtio_pci_modern_dev, virtio_pci_legacy_dev
  // since 5.12) come from modules.dep where they exist: named here, a 5.10
  // kernel, which has none, could not boot.
  std::vector<std::string> names{"virtio_ring", "virtio", "virtio_pci"};
  if (nbd)
    names.insert(names.end(), {"virtio_net", "nbd"});
  else
    names.insert(names.end(), {"virtio_scsi", "sd_mod"});
  // ext4's own dependencies (jbd2, mbcache, crc16) come from modules.dep,
  // crc32c where it is a crypto module from modules.softdep.
  names.push_back("ext4");
  if (filesystem == "xfs" || filesystem == "btrfs") names.push_back(filesystem);
  if (host_root) names.insert(names.end(), {"9pnet_virtio", "9p"});
  return names;
}

std::uint64_t build_initramfs(const std::filesystem::path& out, const InitramfsContents& c) {
  CpioWriter cpio(out);
  for (const char* dir : {"bin", "sbin", "usr", "usr/bin", "usr/sbin", "dev", "proc", "sys", "mnt", "tmp", "root",
                          "run", "etc", "lib", "lib/modules", "nvj"})
    cpio.directory(dir);
  // The kernel opens /dev/console for init's output before anything mounts
  // devtmpfs: without the node the guest is mute.
  cpio.char_device("dev/console", 5, 1);
  cpio.char_device("dev/null", 1, 3, 0666);
  cpio.file("bin/busybox", program_bytes(c.busybox), 0755);
  cpio.symlink("bin/sh", "busybox");
  std::string order;
  for (const auto& m : c.modules) {
    cpio.file("lib/modules/" + m.name + ".ko", module_bytes(m.file));
    order += m.name + (m.optional ? ".ko optional\n" : ".ko\n");
  }
  cpio.file("nvj/modules", order);
  if (!c.workload.empty()) cpio.file("bin/nvj-workload", program_bytes(c.workload), 0755);
  // Each at its path here ("/lib/x86_64-linux-gnu/libc.so.6"), its folders
  // first; a symbolic link's target's bytes under the link's name.
  std::set<std::string> folders{"bin", "sbin", "usr", "usr/bin", "usr/sbin", "lib"};
  for (const auto& path : c.host_files) {
    const std::string name = std::filesystem::path(path).relative_path().string();
    std::string folder;
    for (const auto& part : std::filesystem::path(name).parent_path()) {
      if (!folder.empty()) folder.push_back('/');  // not `"/" + string`: GCC 12 -O3 misreads it (-Wrestrict)
      folder += part.string();
      if (folders.insert(folder).second) cpio.directory(folder);
    }
    cpio.file(name, program_bytes(path), 0755);
  }
  if (!c.plan.nbd_attach.empty()) cpio.file("nvj/attach", guest_nbd_attach_script(c.plan));
  cpio.file("init", guest_init_script(), 0755);
  cpio.file("nvj/config", guest_config(c.plan));
  cpio.file("nvj/command", shell_script(c.plan.command));
  if (!c.plan.check.empty()) cpio.file("nvj/check", shell_script(c.plan.check));
  cpio.finish();
  return cpio.bytes();
}

}  // namespace nvj::cli
