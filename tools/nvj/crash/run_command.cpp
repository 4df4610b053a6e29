// SPDX-License-Identifier: BSD-3-Clause
#include "tools/nvj/crash/run_command.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <stdexcept>

#include "common/command_line.h"
#include "common/control_client.h"
#include "common/json.h"
#include "common/query_escape.h"
#include "tools/nvj/crash/lab_parameters.h"
#include "tools/nvj/crash/state_options.h"
#include "tools/nvj/crash/subcommands.h"
#include "tools/nvj/host/devices/attach.h"
#include "tools/nvj/host/files/text_file.h"
#include "tools/nvj/host/fs_tools/filesystem_tools.h"
#include "tools/nvj/host/processes/interrupt.h"
#include "tools/nvj/host/processes/process.h"
#include "tools/nvj/host/processes/run_folder.h"
#include "tools/nvj/host/processes/server_process.h"
#include "tools/nvj/host/processes/teardown.h"
#include "tools/nvj/testbed/testbed.h"
#include "tools/nvj/vm/guest_kernel.h"
#include "tools/nvj/vm/vm_session.h"

namespace nvj::cli {

namespace fs = std::filesystem;

namespace {

// For a guest on XFS or btrfs, which has no mkfs: a server started here on
// blank exports, the filesystem made on them through this host's block
// layer (attached, mkfs, detached), then the recording started. The guest
// boots on that server (VmOptions::server); teardown stops it.
// `server` outlives `teardown`, which stops it unless it was stopped.
void start_server_with_filesystem(const fs::path& run_dir, std::vector<std::string> params,
                                  const std::string& filesystem, const std::string& log_place, const fs::path& recording,
                                  Teardown& teardown, std::unique_ptr<ServerProcess>& server, std::string& control) {
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
    std::vector<std::string> exports{"data"};
    if (log_place == "external") exports.push_back("journal");
    for (const auto& e : attach(AttachOptions{server->socket(), state, exports, AttachMethod::automatic, {}, true, {}}))
      (e.name == "data" ? data : log) = e.device;
    std::printf("== making %s on the exports, attached to this host (%s%s)\n", filesystem.c_str(), data.c_str(),
                filesystem != "xfs" ? "" : log.empty() ? ", log inside" : (", log on " + log).c_str());
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

// --vm --kernel A,B,...: the run once per kernel, each into OUT/VERSION as
// one run writes it, and OUT/kernels.md setting their verdicts side by side.
int crash_run_kernels(const RunArgs& a) {
  if (a.record_only) throw UsageError("nvj crash record: one --kernel at a time (nvj crash run takes several)");
  if (a.check.out.empty()) throw UsageError("nvj crash run: several kernels need --out DIR (a folder for each)");
  const std::vector<GuestKernel> kernels = named_kernels({a.kernel}, "nvj crash run");
  const fs::path out = fs::absolute(a.check.out);
  int worst = 0;
  std::string header = "| |", rule = "|---|", name_row = "| kernel |", status_row = "| exit status |",
              checked_row = "| crash states checked |",
              failing_row = "| failing |", truth_row = "| checked by the kernel, failing |", disagree_row = "| the kernel disagreeing |";
  for (const GuestKernel& k : kernels) {
    if (interrupted()) break;
    std::printf("== kernel %s\n", describe_kernel(k).c_str());
    std::fflush(stdout);
    RunArgs one = a;
    one.kernel = k.name;
    one.resolved_kernel = k;
    one.check.out = (out / k.version).string();
    const int status = crash_run_main(one);
    worst = std::max(worst, status);
    header += " " + k.version + " |";
    rule += "---|";
    name_row += " " + describe_kernel(k) + " |";
    status_row += " " + std::to_string(status) + " |";
    const fs::path results = out / k.version / "results.json";
    std::optional<Json> verdicts;  // none when the run stopped before its check
    if (fs::exists(results)) verdicts = parse_json(read_text_file(results), results.string()).at("verdicts");
    const auto count = [&](const char* key) -> std::string {
      return verdicts ? std::to_string(verdicts->at(key).get<std::uint64_t>()) : std::string("-");
    };
    checked_row += " " + count("checked") + " |";
    failing_row += " " + count("failing") + " |";
    truth_row += " " + count("ground_truth") + ", " + count("ground_truth_failing") + " |";
    disagree_row += " " + count("disagree") + " |";
  }
  std::ofstream(out / "kernels.md") << "# nvj crash run --vm " << quote(a.workload) << ", by kernel\n\n"
                                    << header << "\n" << rule << "\n" << name_row << "\n" << status_row << "\n" << checked_row << "\n"
                                    << failing_row << "\n" << truth_row << "\n" << disagree_row << "\n";
  std::printf("== by kernel: %s\n", (out / "kernels.md").c_str());
  return interrupted() ? 1 : worst;
}

// What crash run and record refuse before anything is made.
void check_run_args(const RunArgs& a, const char* command) {
  if (!a.kernel.empty() && !a.vm)
    throw UsageError(std::string(command) + ": --kernel is --vm's (the guest's kernel); give --vm too");
  if (!a.transport.empty() && !a.vm)
    throw UsageError(std::string(command) +
                     ": --transport is --vm's (how the guest reaches the exports); give --vm too");
  if (a.cpus != 0 && !a.vm)
    throw UsageError(std::string(command) + ": --cpus is --vm's (the guest's processors); give --vm too");
  if (a.workload.empty())
    throw UsageError(std::string(command) + ": which workload? (" + command + " [OPTION]... -- COMMAND [ARG]...)");
  if (a.record_only && a.check.out.empty()) throw UsageError(std::string(command) + ": --out DIR is required (the recording goes there)");
  if (a.log != "external" && a.filesystem != "xfs")
    throw UsageError(std::string(command) + ": --log " + a.log + " is XFS's (--fs xfs); ext4's journal goes inside "
                     "with fs-journal=internal[:SIZE]");
  if (::geteuid() != 0) throw std::runtime_error(std::string(command) + " needs root: it attaches block devices and mounts them");
}

void stop_if_interrupted() {
  if (interrupted()) throw std::runtime_error("interrupted");
}

// The workload run and recorded in a QEMU guest booted on the exports (nvj
// vm): its exit status. XFS and btrfs are made here first, on a server of
// their own (`vm_server`, stopped by `teardown` if not before).
int record_in_guest(RunArgs& a, const fs::path& run_dir, const std::vector<std::string>& params,
                    const fs::path& recording, Teardown& teardown, std::unique_ptr<ServerProcess>& vm_server) {
  VmOptions o;
  o.mount_options = a.mount_options;
  o.filesystem = a.filesystem;
  o.internal_log = a.log == "internal";
  if (a.filesystem == "ext4")
    o.parameters = params;
  else
    start_server_with_filesystem(run_dir, params, a.filesystem, a.log, recording, teardown, vm_server, o.control);
  if (vm_server) o.server = vm_server->socket();
  o.kernel = a.kernel;
  o.resolved_kernel = a.resolved_kernel;
  o.on_kernel = [&a, &o](const GuestKernel& k) {
    a.check.made_by =
        Json{{"guest", Json{{"kernel", guest_kernel_json(k)}, {"transport", o.transport}, {"cpus", o.cpus}}}};
    std::printf("== the guest's kernel: %s\n", describe_kernel(k).c_str());
    std::fflush(stdout);
  };
  if (!a.transport.empty()) o.transport = a.transport;
  if (a.cpus != 0) o.cpus = a.cpus;
  o.command = a.workload;
  std::printf("== booting a guest on the exports to run %s (nvj vm)\n", quote(a.workload).c_str());
  std::fflush(stdout);
  const int status = run_vm(o);
  stop_if_interrupted();
  std::printf("== the workload exited with status %d; the guest unmounted and powered off\n", status);
  if (vm_server) {
    control_call(o.control, "POST", "/record/stop");
    if (const int stopped = vm_server->stop(); stopped != 0)
      throw std::runtime_error("nbdkit exited with status " + std::to_string(stopped) + ": " + vm_server->log());
  }
  return status;
}

// The workload run and recorded on this host, in the filesystem a Testbed
// mounted (XFS and btrfs made on the attached exports, recorded from just
// after mkfs): its exit status. The lab is down when it returns.
int record_on_host(const RunArgs& a, const fs::path& run_dir, const std::vector<std::string>& params,
                   const fs::path& recording) {
  TestbedOptions o{run_dir, params, a.mount_options, [&](const std::string& what) {
                     stop_if_interrupted();
                     std::printf("== %s\n", what.c_str());
                     std::fflush(stdout);
                   }};
  o.filesystem = a.filesystem;
  if (a.filesystem == "xfs" && a.log == "internal") o.exports = {"data"};
  if (a.filesystem != "ext4")
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
  options.new_group = true;  // stopped, children and all, when we are interrupted
  const int status = wait_or_stop(spawn(a.workload, options), interrupted);
  if (interrupted()) std::printf("== interrupted: the workload was stopped (status %d); taking the lab down\n", status);
  stop_if_interrupted();
  std::printf("== the workload exited with status %d; unmounting\n", status);
  lab.unmount();
  lab.post("/record/stop");
  if (!lab.teardown()) throw std::runtime_error("taking the lab down failed (see above)");
  return status;
}

}  // namespace

int crash_run_main(RunArgs a) {
  const char* command = a.record_only ? "nvj crash record" : "nvj crash run";
  check_run_args(a, command);
  // Several kernels: checked as above before any is fetched, then one run each.
  if (a.vm && !a.resolved_kernel && a.kernel.find(',') != std::string::npos) return crash_run_kernels(a);
  // The kernel named is found (or fetched) before anything is made: a name
  // that names none leaves nothing behind.
  if (a.vm && !a.kernel.empty() && !a.resolved_kernel) a.resolved_kernel = named_kernel(a.kernel, "", command);
  std::vector<std::string> params =
      parameters_over_defaults(a.filesystem, a.parameters, command, " (the workload goes after --)");
  catch_interrupts();

  RunFolder folder("crash");
  if (a.keep) folder.keep();
  const fs::path run_dir = folder.path();
  std::unique_ptr<ServerProcess> vm_server;  // --vm on XFS or btrfs: the server made here
  Teardown teardown;
  const fs::path out = a.check.out.empty() ? run_dir / "report" : fs::path(a.check.out);
  fs::create_directories(out);
  const fs::path recording = fs::absolute(out / "recording.nvjrec");
  if (fs::exists(recording))
    throw std::runtime_error(recording.string() + " exists: a recording is never overwritten (another --out DIR?)");
  // ext4 is there before the server serves, so the recording starts with
  // it; XFS and btrfs are made on the attached exports, and the recording
  // starts after mkfs (before_mount), so that it starts with them.
  if (a.filesystem == "ext4") params.push_back("record=" + recording.string());

  const int status = a.vm ? record_in_guest(a, run_dir, params, recording, teardown, vm_server)
                          : record_on_host(a, run_dir, params, recording);
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
  a.check.run_folder = &folder;
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

namespace {

constexpr const char* kRunText = R"(The crash lab in one command, on this host: start nbdkit with the plugin
recording from its start (defaults: data=256M journal=32M data-model=hdd
journal-model=nvram, ext4 with its journal on the NVRAM export; PARAM=VALUE
replaces or adds, PARAM= drops a default; with fs-journal=internal[:SIZE]
the journal is inside the data export and journal= goes), attach the
exports, mount the filesystem (data=ordered unless --mount-options say
otherwise: data=journal, nobarrier), run COMMAND with the filesystem's root
as its working directory, NVJ_MNT naming it and NVJ_CONTROL the server's
control socket (so that nvj writers, nvj synctest and nvj mark post their
facts there), unmount, take it all down, then check the crash states as nvj
crash check does. Needs root. Exit status 1 when a state fails or the
workload does. SIGINT or SIGTERM stops the workload (or the check: its
report says what was checked) and takes everything down; a run that was
killed outright is cleared by the next one.

With --fs xfs, an XFS made here with its log on the NVRAM export (defaults
data=512M journal=64M fs=none; --log internal: inside the data export),
with --fs btrfs a btrfs on the data export (fs=none): recorded from just
after mkfs and checked by the kernel alone (mount, then xfs_repair -n or
btrfs check --readonly on every state); with --vm too, the filesystem made
here before the guest boots on it.

With --vm, a QEMU guest (as nvj vm) mounts the filesystem at /mnt and runs
COMMAND there, with the guest's programs (busybox, and nvj-workload:
synctest, writers, mark); its facts reach the server over a serial line.
)";

constexpr const char* kRecordText = R"(Record a workload for the crash lab and stop there: nvj crash run without
the check, the same options for the server, the filesystem and the
workload. OUT/recording.nvjrec is what nvj crash check RECORDING checks
(give it the same --mount-options). Exit status 1 when the workload fails.
)";

// What run and record share: the server, the filesystem, the workload.
void workload_options(Command& c, RunArgs& run) {
  c.add("PARAM", run.parameters, "the plugin's PARAM=VALUE, over the defaults").value_name("PARAM=VALUE");
  c.add("--mount-options", run.mount_options, "the workload's mount options (journal_path= or logdev= is added)")
      .value_name("OPTIONS");
  c.choice("--fs", run.filesystem, {"ext4", "xfs", "btrfs"}, "the filesystem (default ext4, the server's)");
  c.choice("--log", run.log, {"external", "internal"},
           "with --fs xfs, its log on the journal export (default) or inside the data export");
  c.flag("--keep-run", run.keep, "leave the run folder (the server's log) behind");
  c.flag("--vm", run.vm, "run the workload in a QEMU guest booted on the exports (as nvj vm)");
  c.add("--kernel", run.kernel,
        "with --vm, the guest's kernel: a bzImage, a folder, debian:SUITE or debian:PACKAGE[=VERSION] (default: the "
        "distribution's); several, comma-separated, run it on each (OUT/VERSION, OUT/kernels.md)")
      .value_name("KERNEL[,KERNEL]...");
  c.choice("--transport", run.transport, {"scsi", "nbd"},
           "with --vm, how the guest reaches the exports: scsi (default: QEMU's NBD client) or nbd (the guest "
           "kernel's, as nvj vm --transport)");
  c.count("--cpus", run.cpus, 1u, 64u,
          "with --vm, the guest's processors (default 1); with more, the kernel's own threads (the journal's "
          "among them) run beside the workload, as on a real machine")
      .value_name("N");
  c.take_words_after_dashes(run.workload);
}

}  // namespace

CrashSubcommand declare_crash_run(Command& crash) {
  auto run = std::make_shared<RunArgs>();
  Command runs = crash.subcommand("run", "record a workload on this host and check its crash states");
  runs.describe(kRunText);
  check_options(runs, run->check);
  workload_options(runs, *run);
  return {runs, [run] {
            check_torn_unit(run->check.options.strategies, "nvj crash run");
            return crash_run_main(*run);
          }};
}

CrashSubcommand declare_crash_record(Command& crash) {
  auto record = std::make_shared<RunArgs>();
  record->record_only = true;
  Command records = crash.subcommand("record", "record a workload for a later check");
  records.describe(kRecordText);
  records.add("--out", record->check.out, "the folder for recording.nvjrec (required)").value_name("DIR");
  workload_options(records, *record);
  return {records, [record] { return crash_run_main(*record); }};
}

}  // namespace nvj::cli
