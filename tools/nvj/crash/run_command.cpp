#include "tools/nvj/crash/run_command.h"

#include <signal.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <filesystem>
#include <stdexcept>

#include "common/command_line.h"
#include "tools/nvj/host/process.h"
#include "tools/nvj/host/teardown.h"
#include "tools/nvj/testbed/testbed.h"
#include "tools/nvj/vm/vm_session.h"

namespace nvj::cli {

namespace fs = std::filesystem;

namespace {

// The default layout: ext4 with its journal on an NVRAM device, its data
// on a disk with a volatile write cache (what loses data if anything does).
const std::vector<std::string> kDefaults{"data=256M", "journal=32M", "data-model=hdd", "journal-model=nvram"};

volatile std::sig_atomic_t g_interrupted = 0;
void on_signal(int) { g_interrupted = 1; }

// The defaults, each replaced by a parameter of the same key given.
std::vector<std::string> parameters_over_defaults(const std::vector<std::string>& given) {
  std::vector<std::string> out;
  const auto key = [](const std::string& p) { return p.substr(0, p.find('=')); };
  for (const std::string& d : kDefaults) {
    bool replaced = false;
    for (const std::string& g : given) replaced = replaced || key(g) == key(d);
    if (!replaced) out.push_back(d);
  }
  for (const std::string& g : given) {
    if (g.find('=') == std::string::npos || g.front() == '=')
      throw UsageError("nvj crash run: '" + g + "' is no PARAM=VALUE (the workload goes after --)");
    if (key(g) == "record" || key(g) == "control")
      throw UsageError("nvj crash run: " + key(g) + "= is its own to set");
    out.push_back(g);
  }
  return out;
}

}  // namespace

int crash_run_main(RunArgs a) {
  if (a.workload.empty()) throw UsageError("nvj crash run: which workload? (nvj crash run [OPTION]... -- COMMAND [ARG]...)");
  if (::geteuid() != 0) throw std::runtime_error("nvj crash run needs root: it attaches block devices and mounts them");
  std::vector<std::string> params = parameters_over_defaults(a.parameters);

  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);

  const fs::path run_dir = fs::path("/run/nvjournal") / ("crash-" + std::to_string(::getpid()));
  Teardown teardown;
  fs::create_directories(run_dir);
  if (!a.keep) teardown.add("remove " + run_dir.string(), [run_dir] { fs::remove_all(run_dir); });
  const fs::path out = a.check.out.empty() ? run_dir / "report" : fs::path(a.check.out);
  fs::create_directories(out);
  const fs::path recording = fs::absolute(out / "recording.nvjrec");
  if (fs::exists(recording))
    throw std::runtime_error(recording.string() + " exists: a recording is never overwritten (another --out DIR?)");
  params.push_back("record=" + recording.string());

  int status = 0;
  if (a.vm) {
    VmOptions o;
    o.parameters = params;
    o.mount_options = a.mount_options;
    o.kernel = a.kernel;
    o.command = a.workload;
    std::printf("== booting a guest on the exports to run %s (nvj vm)\n", quote(a.workload).c_str());
    std::fflush(stdout);
    status = run_vm(o);
    if (g_interrupted != 0) throw std::runtime_error("interrupted");
    std::printf("== the workload exited with status %d; the guest unmounted and powered off\n", status);
  } else {
    Testbed lab(TestbedOptions{run_dir, params, a.mount_options, [](const std::string& what) {
                                 if (g_interrupted != 0) throw std::runtime_error("interrupted");
                                 std::printf("== %s\n", what.c_str());
                                 std::fflush(stdout);
                               }});
    std::printf("== running %s in %s\n", quote(a.workload).c_str(), lab.mount_point().c_str());
    std::fflush(stdout);
    SpawnOptions options;
    options.directory = lab.mount_point().string();
    options.env = {"NVJ_MNT=" + lab.mount_point().string(), "NVJ_CONTROL=" + lab.control()};
    status = wait_for(spawn(a.workload, options));
    if (g_interrupted != 0) throw std::runtime_error("interrupted");
    std::printf("== the workload exited with status %d; unmounting\n", status);
    lab.unmount();
    lab.post("/record/stop");
    if (!lab.teardown()) throw std::runtime_error("taking the lab down failed (see above)");
  }
  std::printf("== the recording: %s (%llu bytes)\n", recording.c_str(),
              static_cast<unsigned long long>(fs::file_size(recording)));
  a.check.recording = recording.string();
  a.check.out = out.string();
  a.check.mount_options = a.mount_options;
  const int checked = crash_check_main(a.check);
  if (a.check.out.empty() || out == run_dir / "report")
    std::printf("(--out DIR keeps the recording and results.json)\n");
  if (!teardown.run()) return 1;
  if (status != 0) {
    std::printf("the workload failed (status %d): its facts stop where it did\n", status);
    return 1;
  }
  return checked;
}

}  // namespace nvj::cli
