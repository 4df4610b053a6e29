// SPDX-License-Identifier: BSD-3-Clause
// nvj demo: a short tour end to end on defaults. Start the server (which
// builds ext4 with its journal on the NVRAM journal export), attach its
// exports, mount the filesystem
// with full data journalling, run fs_mark, check the filesystem, print what
// happened, and take everything down again, also after a failure or Ctrl-C.
#include <signal.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/command_line.h"
#include "tools/nvj/commands.h"
#include "tools/nvj/host/fs_tools/jbd2_info.h"
#include "tools/nvj/host/processes/process.h"
#include "tools/nvj/host/processes/teardown.h"
#include "tools/nvj/host/workloads/fs_mark.h"
#include "tools/nvj/testbed/testbed.h"

namespace nvj::cli {
namespace fs = std::filesystem;
namespace {

constexpr const char* kDemoText = R"(A short tour, end to end: start nbdkit with the nvjournal plugin (a data disk
and an NVRAM journal device, with ext4 built on them by the server, its
journal on the journal device), attach both exports to this host, mount the
filesystem as it is with data=journal, run
fs_mark, unmount, check both devices with e2fsck, print a summary and take
everything down again. Needs root.
)";

struct DemoArgs {
  std::string data_size = "1G";
  std::string journal_size = "64M";
  std::string data_model = "hdd";
  std::string journal_model = "nvram";
  std::uint64_t files = 250;
  std::uint64_t threads = 4;
  std::uint64_t file_size = 10240;
  bool keep = false;
};

volatile std::sig_atomic_t g_interrupted = 0;

void on_demo_signal(int) { g_interrupted = 1; }

void check_demo_interrupted() {
  if (g_interrupted != 0) throw std::runtime_error("interrupted");
}

struct DemoStep {
  int total;
  int n = 0;
  void operator()(const std::string& what) {
    check_demo_interrupted();
    std::printf("[%d/%d] %s\n", ++n, total, what.c_str());
    std::fflush(stdout);
  }
};

std::string description_of(const std::vector<ExportInfo>& exports, const std::string& name) {
  for (const auto& e : exports)
    if (e.name == name) return e.description;
  return name;
}

int demo_main(const DemoArgs& a) {
  const std::string& data_size = a.data_size;
  const std::string& journal_size = a.journal_size;
  const std::string& data_model = a.data_model;
  const std::string& journal_model = a.journal_model;
  const std::uint64_t files = a.files, threads = a.threads, file_size = a.file_size;
  const bool keep = a.keep;
  if (::geteuid() != 0) throw std::runtime_error("nvj demo needs root: it attaches block devices and mounts them");

  struct sigaction sa {};
  sa.sa_handler = on_demo_signal;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);

  const fs::path run_dir = fs::path("/run/nvjournal") / ("demo-" + std::to_string(::getpid()));
  Teardown teardown;
  fs::create_directories(run_dir);
  if (!keep) teardown.add("remove " + run_dir.string(), [run_dir] { fs::remove_all(run_dir); });
  DemoStep step{6};

  Testbed lab(TestbedOptions{run_dir,
                             {"data=" + data_size, "journal=" + journal_size, "data-model=" + data_model,
                              "journal-model=" + journal_model},
                             "data=journal",
                             [&step](const std::string& what) { step(what); }});
  const std::string& data_dev = lab.data_device();
  const std::string& journal_dev = lab.journal_device();
  const fs::path mnt = lab.mount_point();
  const auto& exports = lab.exports();

  // What mkfs and mount did is not the workload's: count from here.
  lab.post("/reset-stats");
  step("fs_mark: " + std::to_string(threads) + " threads x " + std::to_string(files) + " files of " +
       std::to_string(file_size) + " bytes, fsync before close");
  fs::create_directories(mnt / "fs_mark");
  const double rate = run_fs_mark(FsMarkOptions{mnt / "fs_mark", threads, files, file_size, 1, run_dir / "fs_mark.log"})
                          .files_per_second;
  check_demo_interrupted();
  const auto journal = read_jbd2_info(journal_dev);

  step("unmounting");
  lab.unmount();
  // The devices' side of the run, unmount included.
  const std::string device_view = lab.get("/stats?format=text");

  step("checking both devices with e2fsck -fn");
  const auto fsck = lab.check();
  const bool clean = fsck.status == 0;

  std::printf("\nnvjournal demo\n");
  std::printf("  data        %s  on %s\n", description_of(exports, "data").c_str(), data_dev.c_str());
  std::printf("  journal     %s  on %s\n", description_of(exports, "journal").c_str(), journal_dev.c_str());
  std::printf("  filesystem  ext4, 4 KiB blocks, external journal, data=journal\n");
  std::printf("  workload    fs_mark, %llu files of %llu bytes, %llu threads, fsync before close\n",
              static_cast<unsigned long long>(files * threads), static_cast<unsigned long long>(file_size),
              static_cast<unsigned long long>(threads));
  std::printf("  throughput  %.1f files/s\n", rate);
  if (journal)
    std::printf("  journal     %llu transactions (kernel's count), %llu blocks each, %llu us average commit\n",
                static_cast<unsigned long long>(journal->transactions),
                static_cast<unsigned long long>(journal->blocks_per_transaction),
                static_cast<unsigned long long>(journal->commit_time_us));
  std::printf("  e2fsck      %s\n", clean ? "clean" : ("NOT clean:\n" + fsck.output).c_str());
  std::printf("\nWhat the devices saw (the server's statistics, from fs_mark to unmount):\n");
  for (std::size_t at = 0; at < device_view.size();) {  // indented
    const std::size_t end = std::min(device_view.find('\n', at), device_view.size());
    std::printf("  %s\n", device_view.substr(at, end - at).c_str());
    at = end + 1;
  }
  std::fflush(stdout);

  const bool lab_down = lab.teardown();
  const bool torn_down = teardown.run() && lab_down;
  std::printf("\n  teardown    %s\n", torn_down ? "unmounted, detached, server stopped" : "FAILED (see above)");
  return clean && torn_down ? 0 : 1;
}

}  // namespace

CommandRun declare_demo(Command& app) {
  auto a = std::make_shared<DemoArgs>();
  app.describe(kDemoText);
  app.add("--data", a->data_size, "size of the data export (default 1G)").value_name("SIZE");
  app.add("--journal", a->journal_size, "size of the journal export (default 64M)").value_name("SIZE");
  app.add("--data-model", a->data_model, "timing model of the data export (default hdd)").value_name("MODEL");
  app.add("--journal-model", a->journal_model, "timing model of the journal export (default nvram)")
      .value_name("MODEL");
  app.count("--files", a->files, 1, 10'000'000, "files fs_mark writes per thread (default 250)");
  app.count("--threads", a->threads, 1, 64, "fs_mark threads (default 4)");
  app.count("--size", a->file_size, 0, 1ull << 30, "bytes per file (default 10240)").value_name("BYTES");
  app.flag("--keep", a->keep, "leave the run folder (server and fs_mark logs) behind");
  return [a] { return demo_main(*a); };
}

}  // namespace nvj::cli
