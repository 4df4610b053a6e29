#include "tools/nvj/crash/run_command.h"

#include <signal.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <stdexcept>

#include "common/command_line.h"
#include "common/query_escape.h"
#include "tools/nvj/client/control_client.h"
#include "tools/nvj/host/attach.h"
#include "tools/nvj/host/filesystem_tools.h"
#include "tools/nvj/host/process.h"
#include "tools/nvj/host/server_process.h"
#include "tools/nvj/host/teardown.h"
#include "tools/nvj/testbed/testbed.h"
#include "tools/nvj/vm/vm_session.h"

namespace nvj::cli {

namespace fs = std::filesystem;

namespace {

// The default layout: ext4 with its journal on an NVRAM device, its data
// on a disk with a volatile write cache (what loses data if anything does).
// XFS the same with its log on the NVRAM device (mkfs.xfs wants 300 MiB of
// data and 64 MiB of log at least), btrfs on the disk alone; both on blank
// exports (fs=none) for mkfs.
std::vector<std::string> default_parameters(const std::string& filesystem) {
  if (filesystem == "xfs") return {"data=512M", "journal=64M", "data-model=hdd", "journal-model=nvram", "fs=none"};
  if (filesystem == "btrfs") return {"data=256M", "journal=32M", "data-model=hdd", "journal-model=nvram", "fs=none"};
  return {"data=256M", "journal=32M", "data-model=hdd", "journal-model=nvram"};
}

volatile std::sig_atomic_t g_interrupted = 0;
void on_signal(int) { g_interrupted = 1; }

// The defaults, each replaced by a parameter of the same key given.
std::vector<std::string> parameters_over_defaults(const std::string& filesystem, const std::vector<std::string>& given,
                                                  const char* command) {
  std::vector<std::string> out;
  const auto key = [](const std::string& p) { return p.substr(0, p.find('=')); };
  for (const std::string& d : default_parameters(filesystem)) {
    bool replaced = false;
    for (const std::string& g : given) replaced = replaced || key(g) == key(d);
    if (!replaced) out.push_back(d);
  }
  for (const std::string& g : given) {
    if (g.find('=') == std::string::npos || g.front() == '=')
      throw UsageError(std::string(command) + ": '" + g + "' is no PARAM=VALUE (the workload goes after --)");
    if (key(g) == "record" || key(g) == "control")
      throw UsageError(std::string(command) + ": " + key(g) + "= is its own to set");
    if (filesystem != "ext4" && key(g) == "fs" && g != "fs=none")
      throw UsageError(std::string(command) + ": " + g + " with --fs " + filesystem +
                       ": the server builds ext4 only, and " + filesystem + " is made on blank exports (fs=none)");
    out.push_back(g);
  }
  return out;
}

// For a guest on XFS or btrfs, which has no mkfs: a server started here on
// blank exports, the filesystem made on them through this host's block
// layer (attached, mkfs, detached), then the recording started. The guest
// boots on that server (VmOptions::server); teardown stops it.
// `server` outlives `teardown`, which stops it unless it was stopped.
void start_server_with_filesystem(const fs::path& run_dir, std::vector<std::string> params,
                                  const std::string& filesystem, const fs::path& recording, Teardown& teardown,
                                  std::unique_ptr<ServerProcess>& server, std::string& control) {
  control = (run_dir / "control.sock").string();
  params.push_back("control=" + control);
  std::printf("== starting nbdkit nvjournal %s\n", quote(params).c_str());
  server = std::make_unique<ServerProcess>(ServerOptions{run_dir / "server", params, "", {}, {}, false});
  teardown.add("stop the server", [&server] {
    if (!server || server->pid() <= 0) return;  // stopped already, after the guest
    if (const int status = server->stop(); status != 0)
      throw std::runtime_error("nbdkit exited with status " + std::to_string(status) + ": " + server->log());
  });
  const fs::path state = run_dir / "attach";
  std::string data, log;
  try {
    for (const auto& e : attach(AttachOptions{server->socket(), state, {"data", "journal"}, AttachMethod::automatic, {}}))
      (e.name == "data" ? data : log) = e.device;
    std::printf("== making %s on the exports, attached to this host (%s%s)\n", filesystem.c_str(), data.c_str(),
                filesystem == "xfs" ? (", log on " + log).c_str() : "");
    std::fflush(stdout);
    make_filesystem(filesystem, data, log);
  } catch (...) {
    if (fs::exists(state / "attach.log")) detach(state);
    throw;
  }
  detach(state);
  std::printf("== recording from here on into %s\n", recording.c_str());
  control_call(control, "POST", "/record/start?file=" + query_escape(recording.string()));
}

}  // namespace

int crash_run_main(RunArgs a) {
  const char* command = a.record_only ? "nvj crash record" : "nvj crash run";
  if (a.workload.empty())
    throw UsageError(std::string(command) + ": which workload? (" + command + " [OPTION]... -- COMMAND [ARG]...)");
  if (a.record_only && a.check.out.empty()) throw UsageError(std::string(command) + ": --out DIR is required (the recording goes there)");
  if (::geteuid() != 0) throw std::runtime_error(std::string(command) + " needs root: it attaches block devices and mounts them");
  std::vector<std::string> params = parameters_over_defaults(a.filesystem, a.parameters, command);
  const bool ext4 = a.filesystem == "ext4";

  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);

  const fs::path run_dir = fs::path("/run/nvjournal") / ("crash-" + std::to_string(::getpid()));
  std::unique_ptr<ServerProcess> vm_server;  // --vm on XFS or btrfs: the server made here
  Teardown teardown;
  fs::create_directories(run_dir);
  if (!a.keep) teardown.add("remove " + run_dir.string(), [run_dir] { fs::remove_all(run_dir); });
  const fs::path out = a.check.out.empty() ? run_dir / "report" : fs::path(a.check.out);
  fs::create_directories(out);
  const fs::path recording = fs::absolute(out / "recording.nvjrec");
  if (fs::exists(recording))
    throw std::runtime_error(recording.string() + " exists: a recording is never overwritten (another --out DIR?)");
  // ext4 is there before the server serves, so the recording starts with
  // it; XFS and btrfs are made on the attached exports, and the recording
  // starts after mkfs (before_mount below), so that it starts with them.
  if (ext4) params.push_back("record=" + recording.string());

  int status = 0;
  if (a.vm) {
    VmOptions o;
    o.mount_options = a.mount_options;
    o.filesystem = a.filesystem;
    if (ext4)
      o.parameters = params;
    else
      start_server_with_filesystem(run_dir, params, a.filesystem, recording, teardown, vm_server, o.control);
    if (vm_server) o.server = vm_server->socket();
    o.kernel = a.kernel;
    o.command = a.workload;
    std::printf("== booting a guest on the exports to run %s (nvj vm)\n", quote(a.workload).c_str());
    std::fflush(stdout);
    status = run_vm(o);
    if (g_interrupted != 0) throw std::runtime_error("interrupted");
    std::printf("== the workload exited with status %d; the guest unmounted and powered off\n", status);
    if (vm_server) {
      control_call(o.control, "POST", "/record/stop");
      if (const int stopped = vm_server->stop(); stopped != 0)
        throw std::runtime_error("nbdkit exited with status " + std::to_string(stopped) + ": " + vm_server->log());
    }
  } else {
    TestbedOptions o{run_dir, params, a.mount_options, [](const std::string& what) {
                       if (g_interrupted != 0) throw std::runtime_error("interrupted");
                       std::printf("== %s\n", what.c_str());
                       std::fflush(stdout);
                     }};
    o.filesystem = a.filesystem;
    if (!ext4)
      o.before_mount = [&recording](const Testbed& lab) {
        std::printf("== recording from here on into %s\n", recording.c_str());
        lab.post("/record/start?file=" + query_escape(recording.string()));
      };
    Testbed lab(std::move(o));
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
  if (a.record_only) {
    std::printf("check it with: nvj crash check %s%s\n", recording.c_str(),
                a.mount_options.empty() ? "" : (" --mount-options " + a.mount_options).c_str());
    if (!teardown.run()) return 1;
    if (status != 0) std::printf("the workload failed (status %d): its facts stop where it did\n", status);
    return status == 0 ? 0 : 1;
  }
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
