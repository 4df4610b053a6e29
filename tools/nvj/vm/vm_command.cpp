// nvj vm: boot a kernel under QEMU with the server's exports as virtio
// disks, run a command in the guest on the mounted ext4, and return its
// output and exit status; with --crash, cut the power after it and check
// what a second boot finds.
#include <cstdio>
#include <string>
#include <vector>

#include "common/args.h"
#include "tools/nvj/commands.h"
#include "tools/nvj/vm/vm_session.h"

namespace nvj::cli {
namespace {

constexpr const char* kVmHelp = R"(Usage: nvj vm [OPTION]... [PARAM=VALUE]... -- COMMAND [ARG]... [--then CHECK [ARG]...]

Boot a kernel under QEMU (software emulation) with the server's exports as
virtio disks, mount the ext4 on them at /mnt (its journal on /dev/vdb when
it is external), run COMMAND there, and print its output; the exit status
is COMMAND's. nvj starts its own server (nbdkit nvjournal with the
PARAM=VALUE given, by default the plugin's defaults) unless --socket names
a running one. The guest has busybox and nvj-workload (synctest, writers).

With --then, a second boot mounts the filesystem again and runs CHECK; the
exit status is CHECK's. With --crash, the power is cut as soon as COMMAND
has exited (POST /crash: what the devices had not made durable is lost)
and QEMU killed, without an unmount; the second boot's mount replays the
journal.

  --crash            cut the power after COMMAND (then CHECK, default true)
  --policy POLICY    what the cut loses: all (default), random, reorder
  --seed N           seed of random and reorder
  --socket SERVER    use a running server (socket or NBD URI), start none
  --control PATH     that server's control socket (needed by --crash)
  --tls-psk FILE     the key for an nbds:// --socket: a PSK file of
                     USERNAME:HEXKEY lines (nbdkit --tls-psk, psktool)
  --tls-username NAME  the identity in FILE to use (default: its only one)
  --kernel PATH      the kernel (default: linux-image-amd64's, installed if missing)
  --modules DIR      its modules (default: /lib/modules/VERSION)
  --memory SIZE      guest memory (default 512M)
  --cpus N           guest processors (default 1)
  --timeout SECONDS  per boot (default 300)
  --mount-options O  extra mount options (data=journal, ...)
  --console          print the whole console, kernel messages and all
  --verbose, -v      say what happens, with timings
  --keep             keep the run folder (consoles, server log)
)";

bool valid_policy(const std::string& p) { return p == "all" || p == "random" || p == "reorder"; }

}  // namespace

int vm_command(const std::vector<std::string>& argv) {
  // Everything after the first "--" is the guest's.
  std::vector<std::string> options(argv.begin(), argv.end()), guest;
  for (std::size_t i = 0; i < argv.size(); ++i) {
    if (argv[i] == "--") {
      options.assign(argv.begin(), argv.begin() + static_cast<std::ptrdiff_t>(i));
      guest.assign(argv.begin() + static_cast<std::ptrdiff_t>(i) + 1, argv.end());
      break;
    }
  }
  Args args("vm", options);
  VmOptions o;
  std::string item;
  while (args.next(item)) {
    if (item == "--help" || item == "-h") {
      std::fputs(kVmHelp, stdout);
      return 0;
    } else if (item == "--crash") {
      o.crash = true;
    } else if (item == "--policy") {
      o.policy = args.value(item);
      if (!valid_policy(o.policy)) throw UsageError("nvj vm: --policy=" + o.policy + ": expected all, random or reorder");
    } else if (item == "--seed") {
      o.seed = std::to_string(args.number(item, 0, ~std::uint64_t{0}));
    } else if (item == "--socket") {
      o.server = args.value(item);
    } else if (item == "--control") {
      o.control = args.value(item);
    } else if (item == "--tls-psk") {
      o.tls.psk_file = args.value(item);
    } else if (item == "--tls-username") {
      o.tls.username = args.value(item);
    } else if (item == "--kernel") {
      o.kernel = args.value(item);
    } else if (item == "--modules") {
      o.modules = args.value(item);
    } else if (item == "--memory") {
      o.memory = args.bytes(item, 64ull << 20, 64ull << 30);
    } else if (item == "--cpus") {
      o.cpus = static_cast<unsigned>(args.number(item, 1, 64));
    } else if (item == "--timeout") {
      o.timeout = std::chrono::seconds(args.number(item, 1, 7 * 86400));
    } else if (item == "--mount-options") {
      o.mount_options = args.value(item);
    } else if (item == "--console") {
      o.console = true;
    } else if (item == "--verbose" || item == "-v") {
      o.verbose = true;
    } else if (item == "--keep") {
      o.keep = true;
    } else if (item.rfind('-', 0) != 0 && item.find('=') != std::string::npos && item.find('=') > 0) {
      o.parameters.push_back(item);
    } else {
      args.unknown(item);
    }
  }
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
  return run_vm(o);
}

}  // namespace nvj::cli
