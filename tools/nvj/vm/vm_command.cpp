// SPDX-License-Identifier: BSD-3-Clause
// nvj vm: boot a kernel under QEMU with the server's exports as virtio
// disks, run a command in the guest on the mounted filesystem (ext4, XFS or
// btrfs), with the guest's busybox or the host's own programs
// (--host-root), and return its output and exit status; with --crash, cut
// the power after it and check what a second boot finds.
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "common/command_line.h"
#include "tools/nvj/commands.h"
#include "tools/nvj/vm/vm_session.h"

namespace nvj::cli {
namespace {

constexpr const char* kVmText = R"(In full: nvj vm [OPTION]... [PARAM=VALUE]... -- COMMAND [ARG]... [--then CHECK [ARG]...]

Boot a kernel under QEMU (software emulation) with the server's exports as
SCSI disks on virtio-scsi (each saying what its export says: rotation,
write cache, discard, sector sizes), mount the filesystem on them at /mnt (ext4 with its journal
on /dev/sdb when it is external, XFS with its log there, or btrfs: --fs),
run COMMAND there, and print its output; the exit status is COMMAND's. nvj
starts its own server (nbdkit nvjournal with the PARAM=VALUE given, by
default the plugin's defaults) unless --socket names a running one; for
XFS and btrfs that server serves blank exports (fs=none) and nvj makes the
filesystem on them first, on this host (root only). The guest has busybox
and nvj-workload (synctest, writers); with --host-root it runs COMMAND in
this host's root, shared read-only (virtio-9p), with the filesystem at
/mnt and scratch tmpfs on /tmp, /run, /var/tmp and /root: dbench, fio,
xfsprogs or any program of this host runs there unchanged.

With --transport nbd the guest's own kernel attaches the exports instead
(/dev/nbd0, /dev/nbd1), with nbd-client, over a guest network (QEMU's
user-mode network with restrict=on) whose only destinations are forwards
to the server's Unix socket: nothing the guest sends leaves QEMU. That
needs a server on a Unix socket, without TLS.

With --then, a second boot mounts the filesystem again and runs CHECK; the
exit status is CHECK's. With --crash, the power is cut as soon as COMMAND
has exited (POST /crash: what the devices had not made durable is lost)
and QEMU killed, without an unmount; the second boot's mount replays the
journal.
)";

struct VmArgs {
  VmOptions o;
  std::uint64_t memory = 512ull << 20, seed = 0, timeout = 300;
  std::uint32_t cpus = 1;
  bool seed_given = false;
  std::vector<std::string> guest;  // after "--"
  std::string log;                 // --log: xfs's, internal or external
};

int vm_main(VmArgs& a) {
  VmOptions& o = a.o;
  o.memory = a.memory;
  o.cpus = a.cpus;
  o.timeout = std::chrono::seconds(a.timeout);
  if (a.seed_given) o.seed = std::to_string(a.seed);
  for (const std::string& p : o.parameters)
    if (p.find('=') == std::string::npos || p.front() == '=')
      throw UsageError("nvj vm: unexpected argument '" + p + "' (PARAM=VALUE, or the guest's command after --)");
  std::vector<std::string> guest = a.guest;
  for (std::size_t i = 0; i < guest.size(); ++i) {
    if (guest[i] == "--then") {
      o.check.assign(guest.begin() + static_cast<std::ptrdiff_t>(i) + 1, guest.end());
      if (o.check.empty()) throw UsageError("nvj vm: --then needs a command after it");
      guest.resize(i);
      break;
    }
  }
  o.command = guest;
  if (o.command.empty()) throw UsageError("nvj vm: no command given (nvj vm [OPTION]... -- COMMAND [ARG]...)");
  if (!o.server.empty() && !o.parameters.empty())
    throw UsageError("nvj vm: " + o.parameters.front() + ": plugin parameters configure the server nvj vm starts, not one given with --socket");
  if (o.server.empty() && !o.control.empty())
    throw UsageError("nvj vm: --control goes with --socket (the server nvj vm starts has its own, or control=PATH)");
  if (o.server.empty() && (!o.tls.psk_file.empty() || !o.tls.username.empty()))
    throw UsageError("nvj vm: --tls-psk and --tls-username go with --socket nbds://... (the server nvj vm starts has a Unix socket)");
  if (o.crash && !o.server.empty() && o.control.empty())
    throw UsageError("nvj vm: --crash with --socket needs --control PATH: the power is cut through the server's control socket");
  if (!o.crash && (!o.policy.empty() || !o.seed.empty()))
    throw UsageError("nvj vm: --policy and --seed describe the power cut: they go with --crash");
  if (const std::string why = transport_refusal(o.transport, o.server, o.tls); !why.empty())
    throw UsageError("nvj vm: " + why);
  if (!a.log.empty() && o.filesystem != "xfs")
    throw UsageError("nvj vm: --log " + a.log + " is XFS's: it goes with --fs xfs");
  o.internal_log = a.log == "internal";
  if (o.filesystem != "ext4" && o.server.empty()) {
    // The server serves blank disks; the filesystem is made on them here.
    bool blank = false;
    for (const std::string& p : o.parameters) {
      if (p.rfind("fs=", 0) != 0) continue;
      if (p != "fs=none")
        throw UsageError("nvj vm: " + p + " with --fs " + o.filesystem + ": the server builds ext4 only, and " +
                         o.filesystem + " is made on blank exports (fs=none)");
      blank = true;
    }
    if (!blank) o.parameters.push_back("fs=none");
  }
  return run_vm(o);
}

}  // namespace

CommandRun declare_vm(Command& app) {
  auto a = std::make_shared<VmArgs>();
  VmOptions& o = a->o;
  app.describe(kVmText);
  app.add("PARAM=VALUE", o.parameters, "the plugin's parameters, for the server nvj vm starts");
  app.take_words_after_dashes(a->guest);
  app.flag("--crash", o.crash, "cut the power after COMMAND (then CHECK, default true)");
  app.choice("--policy", o.policy, {"all", "random", "reorder"}, "what the cut loses: all (default), random, reorder");
  app.count("--seed", a->seed, 0, ~std::uint64_t{0}, "seed of random and reorder")
      .on_given([a] { a->seed_given = true; });
  app.add("--socket", o.server, "use a running server (socket or NBD URI), start none").value_name("SERVER");
  app.add("--control", o.control, "that server's control socket (needed by --crash)").value_name("CONTROL");
  add_tls_options(app, o.tls, "an nbds:// --socket");
  app.add("--kernel", o.kernel,
          "the kernel: a bzImage, a folder it was built in, debian:SUITE or debian:PACKAGE[=VERSION] (fetched into a "
          "cache: nvj kernel); default: linux-image-amd64's, installed if missing")
      .value_name("KERNEL");
  app.add("--modules", o.modules, "a bzImage's modules (default: /lib/modules/VERSION)").value_name("DIR");
  app.size("--memory", a->memory, 64ull << 20, 64ull << 30, "guest memory (default 512M)");
  app.count("--cpus", a->cpus, 1u, 64u, "guest processors (default 1)");
  app.count("--timeout", a->timeout, 1, 7 * 86400, "per boot (default 300)").value_name("SECONDS");
  app.add("--mount-options", o.mount_options, "extra mount options (data=journal, ...)").value_name("OPTIONS");
  app.choice("--fs", o.filesystem, {"ext4", "xfs", "btrfs"}, "the filesystem the guest mounts (default ext4)");
  app.choice("--log", a->log, {"external", "internal"},
             "XFS's log: on the journal export (external, default) or inside the data export");
  app.choice("--transport", o.transport, {kTransportScsi, kTransportNbd},
             "how the guest reaches the exports: scsi (default: SCSI disks through QEMU's NBD client) or nbd (the "
             "guest kernel's NBD client over a guest network that leads only to the server's socket)");
  app.flag("--host-root", o.host_root, "run COMMAND with this host's programs (its root over virtio-9p, read-only)");
  app.flag("--console", o.console, "print the whole console, kernel messages and all");
  app.flag("-v,--verbose", o.verbose, "say what happens, with timings");
  app.flag("--keep", o.keep, "keep the run folder (consoles, server log)");
  return [a] { return vm_main(*a); };
}

}  // namespace nvj::cli
