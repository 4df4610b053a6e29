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

// /init: the same for every run.
std::string guest_init_script();

// /nvj/config: shell assignments /init sources.
std::string guest_config(const GuestPlan& plan);

// Sixteen random hex digits.
std::string new_token();

}  // namespace nvj::cli
