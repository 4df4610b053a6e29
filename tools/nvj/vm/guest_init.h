// SPDX-License-Identifier: BSD-3-Clause
// What runs inside the guest: the initramfs's /init (a busybox shell
// script) and the per-run files it reads (/nvj/config, /nvj/command,
// /nvj/check). /init loads the modules, mounts the server's filesystem at
// /mnt, runs the step the kernel command line names (nvj.step=command|check)
// (in the host's root, shared over virtio-9p, with GuestPlan::host_root)
// and frames it with markers on the console, which the host reads
// (guest_console.h).
#pragma once

#include <string>
#include <vector>

namespace nvj::cli {

struct GuestPlan {
  std::string token;          // in every marker, so no output can forge one
  unsigned disks = 1;         // /dev/sda (the data export), /dev/sdb (the journal export)
  bool journal = false;       // the filesystem's journal is on the second disk (/dev/sdb)
  std::string filesystem = "ext4";  // ext4 (journal_path=/dev/sdb), xfs (logdev=/dev/sdb), btrfs
  // The nbd transport: the disks are /dev/nbd0 and /dev/nbd1, attached by
  // the guest's kernel NBD client over the guest's network (eth0 at
  // `guest_address`), each with its nbd-client command (nbd_client_argv),
  // in order; empty: SCSI disks (/dev/sda, /dev/sdb).
  std::vector<std::vector<std::string>> nbd_attach;
  // What each device's queue is to say, as nvj attach writes it on a host
  // (block_queue.h): Debian 12's kernel takes the write cache and trim from
  // the handshake, but not the rotation.
  struct NbdQueue {
    bool rotational = false;
    bool write_back = true;
    bool discard = true;
  };
  std::vector<NbdQueue> nbd_queues;
  std::string guest_address;
  std::string mount_options;  // extra, as -o takes them
  bool crash = false;         // after boot 1's command: wait for the power cut, no unmount
  unsigned crash_wait_seconds = 300;  // then power off anyway (nvj is gone)
  std::vector<std::string> command;   // argv, run in /mnt
  std::vector<std::string> check;     // boot 2's argv (empty: no second boot)
  bool facts = false;  // a serial line to the host for marks: NVJ_CONTROL=/dev/ttyS1 (fact_relay.h)
  // The steps run in the host's root (virtio-9p, read-only, mount tag
  // nvjroot) with the filesystem at its /mnt, scratch tmpfs on /tmp, /run,
  // /var/tmp and /root: the host's own programs and libraries.
  bool host_root = false;
};

// 'text' for a POSIX shell: any bytes but NUL survive.
std::string shell_quote(const std::string& text);

// A script that runs argv exactly as given: "exec 'a' 'b c'\n".
std::string shell_script(const std::vector<std::string>& argv);

// /init: the same for every run, tools/nvj/vm/guest_init.sh as it was when
// nvj was built (embedded by tools/nvj/CMakeLists.txt).
std::string guest_init_script();

// /nvj/config: shell assignments /init sources.
std::string guest_config(const GuestPlan& plan);

// /nvj/attach, which /init sources with the nbd transport: per disk, one
// `nbd_attach DEVICE NBD-CLIENT-ARGV...` line and one `nbd_queue DEVICE
// ROTATIONAL WRITE-CACHE DISCARD` line.
std::string guest_nbd_attach_script(const GuestPlan& plan);

// Sixteen random hex digits.
std::string new_token();

}  // namespace nvj::cli
