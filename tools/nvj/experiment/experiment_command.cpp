// SPDX-License-Identifier: BSD-3-Clause
// nvj experiment NAME [--quick] [--out DIR] [--passes N]: the classic experiments.
#include <signal.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "common/command_line.h"
#include "tools/nvj/commands.h"
#include "tools/nvj/experiment/experiment.h"
#include "tools/nvj/host/processes/interrupt.h"
#include "tools/workloads/task_group.h"

namespace nvj::cli {
namespace fs = std::filesystem;
namespace {

// A synctest or writers run in progress ends at once.
void stop_workloads() { workloads::stop_tasks(); }

constexpr const char* kText = R"(A classic experiment end to end on this host: servers with the devices it
compares, their exports attached and the filesystem mounted, the seed's
workload, and what the devices saw. Writes results.json, table.md and plots
(PNG and SVG) into the output folder and prints the table. Needs root.
)";

struct Experiment {
  const char* name;
  const char* summary;
  const char* text;
  int (*run)(const ExperimentOptions&);
};

constexpr Experiment kExperiments[] = {
    {"morton2001", "synctest over processes per directory, journal placement (Morton 2001)",
     "synctest (an MTA) over processes per directory, full data journalling, journal internal on a disk vs external\n"
     "on NVRAM vs external on a disk vs a smaller internal one (Morton 2001).\n",
     morton2001},
    {"wheeler2007", "fs_mark threads 1..40, journal latency and batching (Wheeler 2007)",
     "fs_mark, 10240-byte files in one directory, threads 1..40, journal on NVRAM, SSD and disk models,\n"
     "max_batch_time default and 0: files/s and the transactions behind them (Wheeler 2007).\n",
     wheeler2007},
    {"enospc2015", "small volumes filled three ways: time to fail, fill, writes kept (Phillips 2015)",
     "Small volumes filled by dd, by untarring a tree again and again, and by 1000 parallel writers: time to fail,\n"
     "fill reached, acknowledged writes checked (Phillips 2015).\n",
     enospc2015},
    {"chinner2012", "threads writing large files: the disk's view, extents, read-back, ext4 and XFS (Chinner 2012)",
     "8 to 64 threads each writing one large file onto a disk model, ext4 against XFS: throughput, request sizes,\n"
     "sequential fraction, seek distances, disk time, extents per file, read-back rate (Chinner 2012).\n",
     chinner2012},
    {"phillips2014", "untar, ls -R and tar c on a disk: seeks per operation, ext4, XFS, btrfs (Phillips 2014)",
     "A source-like tree untarred onto a disk model, then ls -R and tar c from a cold cache, on ext4, XFS and\n"
     "btrfs: time, and the seeks behind it (how well each packs directories and their files; Phillips 2014).\n",
     phillips2014},
};

struct ExperimentArgs {
  ExperimentOptions o;
  std::string out;
  std::string filesystems;  // --fs, as given
  std::string unknown;  // a word that names no experiment
};

// "ext4,xfs" -> {"ext4", "xfs"}: each known, none twice ("" -> none given).
std::vector<std::string> filesystem_list(const char* experiment, const std::string& text) {
  std::vector<std::string> out;
  if (text.empty()) return out;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = text.find(',', start);
    const std::string word = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (word != "ext4" && word != "xfs" && word != "btrfs")
      throw UsageError("nvj experiment " + std::string(experiment) + ": --fs " + text + ": '" + word +
                       "' is not ext4, xfs or btrfs");
    for (const auto& seen : out)
      if (seen == word) throw UsageError("nvj experiment " + std::string(experiment) + ": --fs " + text + ": " + word + " twice");
    out.push_back(word);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

int experiment_main(ExperimentArgs& a, const Experiment& e) {
  ExperimentOptions& o = a.o;
  o.filesystems = filesystem_list(e.name, a.filesystems);
  o.out = a.out.empty() ? "nvj-" + std::string(e.name) : a.out;
  if (fs::exists(o.out) && !fs::is_directory(o.out))
    throw std::runtime_error("--out " + o.out.string() + " exists and is not a folder");
  if (::geteuid() != 0) throw std::runtime_error("nvj experiment needs root: it attaches block devices and mounts them");
  o.out = fs::absolute(o.out);
  // Ctrl-C or SIGTERM: the workload's tasks die, the run in progress fails
  // and everything is torn down (unmount, detach, stop) before nvj exits.
  catch_interrupts(stop_workloads);
  o.interrupted = interrupt_flag();
  o.run_dir = fs::path("/run/nvjournal") / ("experiment-" + std::to_string(::getpid()));
  struct RemoveRunDir {
    fs::path dir;
    ~RemoveRunDir() {
      std::error_code ignored;
      fs::remove_all(dir, ignored);
    }
  } remove{o.run_dir};
  return e.run(o);
}

}  // namespace

CommandRun declare_experiment(Command& app) {
  auto a = std::make_shared<ExperimentArgs>();
  app.describe(kText);
  // Words that name no experiment land here, to be named as such.
  app.add("NAME", a->unknown, "the experiment (one of the commands below)");
  app.require_subcommands(0, 1);
  std::vector<std::pair<Command, const Experiment*>> subs;
  for (const Experiment& e : kExperiments) {
    Command sub = app.subcommand(e.name, e.summary);
    sub.describe(std::string(e.text) + "Writes results.json, table.md and plots into the output folder. Needs root.\n");
    sub.flag("--quick", a->o.quick, "the short version (a few minutes)");
    sub.add("--out", a->out,
                    "output folder (default ./nvj-NAME); results.json and table.md are rewritten after every run, so "
                    "a run stopped half-way keeps what it measured")
        .value_name("DIR");
    if (e.run == morton2001) sub.count("--passes", a->o.passes, 1u, 100000u, "files per process (default 100, quick 15)");
    if (e.run == phillips2014)
      sub.add("--fs", a->filesystems, "the filesystems compared, in order (default ext4,xfs,btrfs)")
          .value_name("LIST");
    if (e.run == enospc2015)
      sub.add("--fs", a->filesystems, "the filesystems compared, in order (default ext4,xfs,btrfs)")
          .value_name("LIST");
    if (e.run == chinner2012 || e.run == wheeler2007)
      sub.add("--fs", a->filesystems, "the filesystems compared, in order (default ext4,xfs)").value_name("LIST");
    subs.emplace_back(sub, &e);
  }
  return [a, subs] {
    for (const auto& [sub, e] : subs)
      if (sub.parsed()) return experiment_main(*a, *e);
    if (!a->unknown.empty())
      throw UsageError("nvj experiment: unknown experiment '" + a->unknown + "' (nvj experiment --help lists them)");
    throw UsageError("nvj experiment: which one? (nvj experiment --help lists them)");
  };
}

}  // namespace nvj::cli
