// nvj experiment NAME [--quick] [--out DIR] [--keep]
#include <signal.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <filesystem>
#include <stdexcept>

#include "common/args.h"
#include "tools/nvj/commands.h"
#include "tools/nvj/experiment/experiment.h"
#include "tools/workloads/task_group.h"

namespace nvj::cli {
namespace fs = std::filesystem;
namespace {

volatile std::sig_atomic_t g_interrupted = 0;
void on_signal(int) {
  g_interrupted = 1;
  workloads::stop_tasks();  // a synctest or writers run in progress ends now
}

constexpr const char* kHelp = R"(Usage: nvj experiment NAME [OPTION]...

A classic experiment end to end on this host: servers with the devices it
compares, their exports attached and the filesystem mounted, the seed's
workload, and what the devices saw. Writes results.json, table.md and plots
(PNG and SVG) into the output folder and prints the table. Needs root.

Experiments:
  morton2001   synctest (an MTA) over processes per directory, full data
               journalling, journal internal on a disk vs external on NVRAM
               vs external on a disk vs a smaller internal one (Morton 2001)
  wheeler2007  fs_mark, 10240-byte files in one directory, threads 1..40,
               journal on NVRAM, SSD and disk models, max_batch_time
               default and 0: files/s and the transactions behind them
               (Wheeler 2007)
  enospc2015   small volumes filled by dd, by untarring a tree again and
               again, and by 1000 parallel writers: time to fail, fill
               reached, acknowledged writes checked (Phillips 2015)

  --quick      the short version (a few minutes)
  --out DIR    output folder (default ./nvj-NAME); results.json and
               table.md are rewritten after every run, so a run stopped
               half-way keeps what it measured
  --passes N   morton2001: files per process (default 100, quick 15)
)";

}  // namespace

int experiment_command(const std::vector<std::string>& argv) {
  Args args("experiment", argv);
  ExperimentOptions o;
  std::string name;
  std::string item;
  while (args.next(item)) {
    if (item == "--help" || item == "-h") {
      std::fputs(kHelp, stdout);
      return 0;
    } else if (item == "--quick") {
      o.quick = true;
    } else if (item == "--passes") {
      o.passes = static_cast<std::uint32_t>(args.number(item, 1, 100000));
    } else if (item == "--out") {
      o.out = args.value(item);
    } else if (item.rfind('-', 0) != 0 && name.empty()) {
      name = item;
    } else {
      args.unknown(item);
    }
  }
  if (name.empty()) throw UsageError("nvj experiment: which one? (nvj experiment --help lists them)");
  int (*const experiment)(const ExperimentOptions&) = name == "morton2001"    ? morton2001
                                                       : name == "wheeler2007" ? wheeler2007
                                                       : name == "enospc2015"  ? enospc2015
                                                                               : nullptr;
  if (experiment == nullptr)
    throw UsageError("nvj experiment: unknown experiment '" + name + "' (nvj experiment --help lists them)");
  if (o.passes != 0 && name != "morton2001") throw UsageError("nvj experiment: --passes is morton2001's");
  if (o.out.empty()) o.out = "nvj-" + name;
  if (fs::exists(o.out) && !fs::is_directory(o.out))
    throw std::runtime_error("--out " + o.out.string() + " exists and is not a folder");
  if (::geteuid() != 0) throw std::runtime_error("nvj experiment needs root: it attaches block devices and mounts them");
  o.out = fs::absolute(o.out);
  // Ctrl-C or SIGTERM: the workload's tasks die, the run in progress fails
  // and everything is torn down (unmount, detach, stop) before nvj exits.
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  o.interrupted = &g_interrupted;
  o.run_dir = fs::path("/run/nvjournal") / ("experiment-" + std::to_string(::getpid()));
  struct RemoveRunDir {
    fs::path dir;
    ~RemoveRunDir() {
      std::error_code ignored;
      fs::remove_all(dir, ignored);
    }
  } remove{o.run_dir};
  return experiment(o);
}

}  // namespace nvj::cli
