// SPDX-License-Identifier: BSD-3-Clause
// The guest's initramfs, built for each run (about 8 MB, tens of
// milliseconds: no cache to go stale): busybox with its applets, the
// modules for virtio-scsi disks (or, with the nbd transport, for the
// kernel's NBD client over a virtio network card, and this host's
// nbd-client with its libraries) and ext4, the static nvj-workload, /init
// and the run's plan (guest_init.h).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "tools/nvj/vm/guest_init.h"
#include "tools/nvj/vm/guest_kernel.h"

namespace nvj::cli {

// The modules the guest loads, in order (their dependencies are resolved
// from modules.dep): virtio over PCI, virtio-scsi and SCSI disks, ext4 and jbd2, and
// crc32c, which metadata_csum needs and which nothing loads without
// modprobe. With "xfs" or "btrfs", that filesystem's module too; with
// `host_root`, virtio-9p's (9pnet_virtio, 9p) for the host's root; with
// `nbd`, virtio_net and nbd instead of virtio_scsi and sd_mod.
std::vector<std::string> guest_module_names(const std::string& filesystem = "ext4", bool host_root = false,
                                            bool nbd = false);

struct InitramfsContents {
  std::vector<GuestModule> modules;  // in loading order
  std::string busybox;               // a static busybox
  std::string workload;              // the static nvj-workload, or "" to leave it out
  // Programs of this host and their shared libraries (GuestTools::
  // nbd_client_files), each at its own path in the guest.
  std::vector<std::string> host_files;
  GuestPlan plan;
};

// Writes the archive, uncompressed newc: gzip'd, the guest booted no faster
// (5.1 to 6.1 s either way, measured), and this needs no compressor. Returns
// its size in bytes; throws naming a file it cannot read.
std::uint64_t build_initramfs(const std::filesystem::path& out, const InitramfsContents& contents);

}  // namespace nvj::cli
