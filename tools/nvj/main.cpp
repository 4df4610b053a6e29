// nvj: the nvjournal command.
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "common/args.h"
#include "tools/nvj/commands.h"
#include "tools/workloads/workload_commands.h"

namespace {

constexpr const char* kHelp = R"(Usage: nvj COMMAND [OPTION]...

nvjournal: a lab for filesystem journals, served over NBD.

Commands:
  demo      the main job end to end: server, attach, ext4, fs_mark, summary
  mkfs      build an ext4 image (internal or external journal), without mke2fs
  journal   a journal offline (inspect, replay like e2fsck) or live (top)
  attach    attach a running server's exports to block devices on this host
  detach    undo an attach
  stats     a running server's statistics, from its control socket
  bench     latency and IOPS of one export, through libnbd
  synctest  the MTA simulator of Morton's ext3 tests, on a directory
  writers   the parallel writer of the Tux3 out-of-space tests, on a directory
  experiment  a classic experiment end to end: tables and plots
            (morton2001, wheeler2007, enospc2015)
  vm        run a command in a QEMU guest on the exports (--crash: power cut, replay)

nvj COMMAND --help describes each one; man nvj has the details.
)";

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    std::fputs(kHelp, args.empty() ? stderr : stdout);
    return args.empty() ? 2 : 0;
  }
  if (args[0] == "--version") {
    std::printf("nvj %s\n", NVJ_VERSION);
    return 0;
  }
  const std::string command = args[0];
  args.erase(args.begin());
  try {
    if (command == "attach") return nvj::cli::attach_command(args);
    if (command == "detach") return nvj::cli::detach_command(args);
    if (command == "demo") return nvj::cli::demo_command(args);
    if (command == "stats") return nvj::cli::stats_command(args);
    if (command == "bench") return nvj::cli::bench_command(args);
    if (command == "mkfs") return nvj::cli::mkfs_command(args);
    if (command == "journal") return nvj::cli::journal_command(args);
    if (command == "experiment") return nvj::cli::experiment_command(args);
    if (command == "vm") return nvj::cli::vm_command(args);
    if (command == "synctest") return nvj::workloads::synctest_command(args);
    if (command == "writers") return nvj::workloads::writers_command(args);
    std::fprintf(stderr, "nvj: unknown command '%s' (nvj --help lists them)\n", command.c_str());
    return 2;
  } catch (const nvj::cli::UsageError& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "nvj %s: %s\n", command.c_str(), e.what());
    return 1;
  }
}
