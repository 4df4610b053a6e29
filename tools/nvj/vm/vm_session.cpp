// SPDX-License-Identifier: BSD-3-Clause
#include "tools/nvj/vm/vm_session.h"

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <stdexcept>

#include "common/control_client.h"
#include "common/json.h"
#include "tools/nvj/client/server_address.h"
#include "tools/nvj/host/devices/attach.h"
#include "tools/nvj/host/fs_tools/filesystem_tools.h"
#include "tools/nvj/host/processes/interrupt.h"
#include "tools/nvj/host/processes/process.h"
#include "tools/nvj/host/processes/server_process.h"
#include "tools/nvj/host/processes/teardown.h"
#include "tools/nvj/vm/fact_relay.h"
#include "tools/nvj/vm/guest_boot.h"
#include "tools/nvj/vm/guest_init.h"
#include "tools/nvj/vm/guest_kernel.h"
#include "tools/nvj/vm/guest_tools.h"
#include "tools/nvj/vm/initramfs.h"

namespace nvj::cli {
namespace fs = std::filesystem;
namespace {

using Clock = std::chrono::steady_clock;

void check_interrupted() {
  if (interrupted()) throw std::runtime_error("interrupted");
}

void say(const std::string& text) {
  std::fprintf(stderr, "nvj vm: %s\n", text.c_str());
  std::fflush(stderr);
}

// /run/nvjournal/vm-PID as root; a user's own temporary folder otherwise
// (QEMU and the server need no root).
fs::path make_run_folder() {
  const std::string name = "vm-" + std::to_string(::getpid());
  fs::path base = "/run/nvjournal";
  std::error_code ec;
  fs::create_directories(base, ec);
  if (ec || ::access(base.c_str(), W_OK) != 0) {
    base = fs::temp_directory_path() / ("nvjournal-" + std::to_string(::geteuid()));
    fs::create_directory(base);
    // A shared temporary folder: the socket and the guest's files go only
    // into one of our own.
    struct stat st {};
    if (::lstat(base.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != ::geteuid())
      throw std::runtime_error(base.string() + " is not a folder of this user's");
    fs::permissions(base, fs::perms::owner_all);
  }
  fs::create_directories(base / name);
  return base / name;
}

std::optional<std::string> parameter(const std::vector<std::string>& params, const std::string& key) {
  for (const auto& p : params)
    if (p.rfind(key + "=", 0) == 0) return p.substr(key.size() + 1);
  return std::nullopt;
}

void post(const std::string& control, const std::string& target, std::string* body = nullptr) {
  std::string answer = control_call(control, "POST", target);
  if (body != nullptr) *body = std::move(answer);
}

std::string crash_target(const VmOptions& o) {
  std::string query;
  if (!o.policy.empty()) query += "policy=" + o.policy;
  if (!o.seed.empty()) query += (query.empty() ? "" : "&") + ("seed=" + o.seed);
  return "/crash" + (query.empty() ? "" : "?" + query);
}

std::string seconds(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f s", s);
  return buf;
}

std::string exited(const std::vector<std::string>& argv, int status) {
  return quote(argv) + " exited " + std::to_string(status);
}

}  // namespace

std::string transport_refusal(const std::string& transport, const std::string& server, const TlsOptions& tls) {
  if (transport == kTransportScsi) return "";
  if (transport != kTransportNbd)
    return "--transport " + transport + ": no such transport (scsi: QEMU's NBD client and SCSI disks; nbd: the guest "
           "kernel's NBD client)";
  const bool tls_given = !tls.psk_file.empty() || !tls.username.empty() || server.rfind("nbds:", 0) == 0 ||
                         server.rfind("nbds+", 0) == 0;
  if (tls_given)
    return "--transport nbd with a TLS server (" + (server.empty() ? std::string("--tls-psk") : server) +
           "): the guest kernel's NBD client does no TLS; use --transport scsi (QEMU's NBD client takes a PSK)";
  if (server.rfind("nbd://", 0) == 0)
    return "--transport nbd with a TCP server (" + server +
           "): the guest's network leads only to a Unix socket on this host; give the server's socket (a path or "
           "nbd+unix:///?socket=PATH), or use --transport scsi";
  return "";
}

long long writes_lost(const std::string& answer) {
  Json cut;
  try {
    cut = parse_json(answer, "POST /crash");
  } catch (const std::runtime_error&) {
    return -1;
  }
  if (!cut.is_object() || !cut.contains("exports") || !cut["exports"].is_object()) return -1;
  long long sum = -1;
  for (const auto& [name, report] : cut["exports"].items()) {
    if (!report.is_object() || !report.contains("volatile_lost")) continue;
    const Json& lost = report["volatile_lost"];
    if (lost.is_number_unsigned()) sum = (sum < 0 ? 0 : sum) + lost.get<long long>();
  }
  return sum;
}

std::string journal_replay_line(const std::vector<std::string>& log) {
  for (const auto& line : log)
    if (line.find("recovery complete") != std::string::npos) return line;
  return "";
}

namespace {

// One run, phase by phase. Members are declared so that, leaving by an
// exception, a boot's QEMU (held by the caller's BootOutcome, declared
// later) goes first, then the teardown stops the server and removes the
// run folder.
class VmRun {
 public:
  explicit VmRun(const VmOptions& o) : o_(o) {}

  int run() {
    if (const std::string why = transport_refusal(o_.transport, o_.server, o_.tls); !why.empty())
      throw std::runtime_error("nvj vm: " + why);
    // A server given is checked (its TLS settings, its key) before anything is installed.
    if (!o_.server.empty()) ServerAddress::parse(o_.server, o_.tls);
    find_everything();
    run_dir_ = make_run_folder();
    if (o_.keep)
      say("run folder " + run_dir_.string() + " (kept)");
    else
      teardown_.add("remove " + run_dir_.string(), [dir = run_dir_] { fs::remove_all(dir); });
    connect_server();
    if (o_.before_boot) o_.before_boot(control_);
    build_initramfs_for(plan());
    return plan_.check.empty() ? one_boot() : two_boots();
  }

 private:
  // A kernel named is found (or fetched) before anything is installed;
  // the distribution's may be installed first.
  void find_everything() {
    if (o_.resolved_kernel)
      kernel_ = *o_.resolved_kernel;
    else if (!o_.kernel.empty())
      kernel_ = named_kernel(o_.kernel, o_.modules, "nvj vm");
    tools_ = find_guest_tools(!kernel_, nbd());
    if (!kernel_) {
      kernel_ = distribution_kernel("nvj vm");
      if (!o_.modules.empty()) kernel_->modules = o_.modules;
    }
    modules_ = resolve_modules(kernel_->modules, guest_module_names(o_.filesystem, o_.host_root, nbd()));
    if (o_.on_kernel) o_.on_kernel(*kernel_);
    if (!tools_.workload_note.empty()) say(tools_.workload_note + ": the guest has no nvj-workload");
    if (o_.verbose) say("kernel " + describe_kernel(*kernel_));
  }

  // Ours, with a control socket for the power cut, or the one given; its
  // exports become the guest's disks.
  void connect_server() {
    std::string address = o_.server;
    control_ = o_.control;
    if (address.empty()) {
      auto params = o_.parameters;
      if (auto c = parameter(params, "control")) {
        control_ = *c;
      } else {
        control_ = (run_dir_ / "control.sock").string();
        params.push_back("control=" + control_);
      }
      if (o_.verbose) say("starting nbdkit nvjournal " + quote(params));
      server_ = std::make_unique<ServerProcess>(ServerOptions{run_dir_ / "server", params, "", {}, {}, false});
      teardown_.add("stop the server", [this] {
        if (const int status = server_->stop(); status != 0)
          throw std::runtime_error("nbdkit exited with status " + std::to_string(status) + ": " + server_->log());
      });
      address = server_->socket();
      if (o_.verbose) say("nbdkit started (pid " + std::to_string(server_->pid()) + ")");
      if (o_.filesystem != "ext4") make_filesystem_here(address);
    }
    const ServerAddress server = ServerAddress::parse(address, o_.tls);
    bool has_data = false;
    std::string names;
    for (const auto& e : server.list_exports()) {
      has_data = has_data || e.name == "data";
      has_journal_ = has_journal_ || e.name == "journal";
      names += (names.empty() ? "" : ", ") + ("'" + e.name + "'");
    }
    if (!has_data) throw std::runtime_error("the server " + address + " has no export 'data' (it has " + names + ")");
    std::vector<std::string> exports{"data"};
    if (has_journal_) exports.emplace_back("journal");
    if (nbd()) {
      forward_exports(server, exports);
      return;
    }
    // Each disk says what its export tells the host (qemu.h).
    for (const auto& name : exports)
      drives_.push_back(
          NbdDrive{server.socket(), server.host(), server.port(), name, query_export_traits(server, name)});
    if (server.tls()) give_qemu_the_key(server);
  }

  bool nbd() const { return o_.transport == kTransportNbd; }

  // The nbd transport: for each export a TCP address in the guest's
  // network, forwarded by QEMU to the server's socket, and the nbd-client
  // command the guest attaches it with (nvj attach's, with the export's
  // sector size), and the queue settings /init then writes as nvj attach
  // does on a host (the kernel takes the rest from the handshake).
  void forward_exports(const ServerAddress& server, const std::vector<std::string>& exports) {
    if (server.socket().empty() || server.tls())
      throw std::runtime_error("nvj vm --transport nbd: the server " + server.text() +
                               " is not a Unix socket without TLS, which the guest's network alone can reach");
    for (std::size_t i = 0; i < exports.size(); ++i) {
      const GuestForward forward{kForwardAddress, kForwardFirstPort + static_cast<unsigned>(i), server.socket()};
      forwards_.push_back(forward);
      const ExportTraits traits = query_export_traits(server, exports[i]);
      nbd_attach_.push_back(nbd_client_argv(NbdClientServer{{}, forward.address, std::to_string(forward.port)},
                                            exports[i], traits.logical_sector, "/dev/nbd" + std::to_string(i)));
      nbd_queues_.push_back(GuestPlan::NbdQueue{traits.rotational, traits.write_back, traits.trim});
      if (o_.verbose) say("export '" + exports[i] + "': " + traits.describe() + ", /dev/nbd" + std::to_string(i) +
                          " in the guest through " + forward.address + ":" + std::to_string(forward.port));
    }
  }

  // XFS or btrfs on the blank exports of the server started here, made
  // through this host's block layer; detached again before the guest boots.
  void make_filesystem_here(const std::string& socket) {
    if (::geteuid() != 0)
      throw std::runtime_error("nvj vm --fs " + o_.filesystem +
                               " makes the filesystem on this host (attach, mkfs, detach): it needs root");
    const fs::path state = run_dir_ / "attach";
    std::string data, log;
    const std::vector<std::string> exports =
        o_.filesystem == "xfs" && !o_.internal_log ? std::vector<std::string>{"data", "journal"}
                                                   : std::vector<std::string>{"data"};
    try {
      for (const auto& e : attach(AttachOptions{socket, state, exports, AttachMethod::automatic, {}, true, {}}))
        (e.name == "data" ? data : log) = e.device;
      say("making " + o_.filesystem + " on " + data + (log.empty() ? "" : " (log on " + log + ")"));
      make_filesystem(o_.filesystem, data, log);
    } catch (...) {
      if (fs::exists(state / "attach.log")) detach(state);
      throw;
    }
    detach(state);
  }

  // QEMU reads a PSK from DIR/keys.psk: a copy of the identity used, mode
  // 0600 in a folder of mode 0700, removed at the end even with --keep.
  void give_qemu_the_key(const ServerAddress& server) {
    if (server.psk_file().empty())
      throw std::runtime_error("the server " + server.text() +
                               " is reached with certificates (tls-certificates=): nvj vm gives QEMU a PSK only "
                               "(--tls-psk FILE)");
    const fs::path dir = run_dir_ / "tls-psk";
    fs::create_directory(dir);
    teardown_.add("remove " + dir.string(), [dir] { fs::remove_all(dir); });
    fs::permissions(dir, fs::perms::owner_all);
    write_psk_file(dir / "keys.psk", server.psk_identity());
    tls_ = QemuTlsPsk{dir, server.psk_identity().username};
  }

  const GuestPlan& plan() {
    plan_.token = new_token();
    // XFS's log on the second disk unless it is internal; btrfs uses none.
    plan_.journal = has_journal_ && !(o_.filesystem == "xfs" && o_.internal_log);
    plan_.disks = static_cast<unsigned>(nbd() ? forwards_.size() : drives_.size());
    plan_.nbd_attach = nbd_attach_;
    plan_.nbd_queues = nbd_queues_;
    if (nbd()) plan_.guest_address = kGuestAddress;
    plan_.host_root = o_.host_root;
    plan_.mount_options = o_.mount_options;
    plan_.filesystem = o_.filesystem;
    plan_.crash = o_.crash;
    plan_.crash_wait_seconds = static_cast<unsigned>(o_.timeout.count());
    plan_.command = o_.command;
    plan_.check = o_.check;
    plan_.facts = !control_.empty();
    if (o_.crash && plan_.check.empty()) plan_.check = {"true"};  // boot 2 still mounts: the replay is the test
    return plan_;
  }

  void build_initramfs_for(const GuestPlan& plan) {
    const auto start = Clock::now();
    initrd_ = run_dir_ / "initrd.img";
    const std::uint64_t bytes =
        build_initramfs(initrd_, {modules_, tools_.busybox, tools_.workload, tools_.nbd_client_files, plan});
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count();
    if (o_.verbose)
      say("initramfs " + std::to_string(bytes >> 10) + " KiB (" + std::to_string(modules_.size()) +
          " modules) built in " + std::to_string(ms) + " ms");
  }

  BootOutcome boot(int n, const std::string& step, bool leave_running) {
    BootOptions b;
    b.qemu = QemuConfig{tools_.qemu,
                        kernel_->image,
                        initrd_,
                        // Quiet unless the whole console is wanted: the step's output
                        // then has only errors of the kernel's among it. No SCSI
                        // scan of the kernel's own: /init scans the disks in order.
                        std::string("console=ttyS0 panic=-1 scsi_mod.scan=none ") + (o_.console ? "" : "quiet ") +
                            "nvj.step=" + step,
                        static_cast<unsigned>(o_.memory >> 20),
                        o_.cpus,
                        drives_,
                        tls_,
                        run_dir_ / ("console-" + std::to_string(n) + ".log"),
                        {},
                        o_.host_root ? fs::path("/") : fs::path(),
                        forwards_};
    // The guest's marks, relayed to the server while it runs.
    std::unique_ptr<FactRelay> relay;
    if (plan_.facts) {
      b.qemu.serial_socket = run_dir_ / ("marks-" + std::to_string(n) + ".sock");
      relay = std::make_unique<FactRelay>(b.qemu.serial_socket, control_, o_.lab);
    }
    b.qemu_log = run_dir_ / ("qemu-" + std::to_string(n) + ".log");
    b.token = plan_.token;
    b.label = "boot " + std::to_string(n);
    b.leave_running = leave_running;
    b.whole_console = o_.console;
    b.timeout = o_.timeout;
    b.check_interrupted = check_interrupted;
    if (o_.verbose) {
      say(b.label + ": " + quote(qemu_argv(b.qemu)));
      b.on_started = [label = b.label](pid_t pid) { say(label + ": QEMU started (pid " + std::to_string(pid) + ")"); };
    }
    BootOutcome r = run_boot(b, stdout, stderr);
    if (relay) {
      if (!leave_running) relay->finish();  // the guest has powered off: the last lines are in
      // (with leave_running the power is cut next: what was not relayed by now came after the command)
      if (o_.verbose || relay->relayed() > 0)
        say(b.label + ": " + std::to_string(relay->relayed()) + " marks from the guest posted to the server");
      if (!relay->error().empty()) say(b.label + ": a mark from the guest was not taken: " + relay->error());
      relay.reset();
    }
    if (o_.verbose)
      say(b.label + ": kernel, modules and mount took " + seconds(r.seconds_to_step) + ", the " + step + " " +
          seconds(r.step_seconds));
    if (!leave_running && !r.unmounted)
      say(b.label + ": the guest did not unmount /mnt cleanly" + (r.failure.empty() ? "" : ": " + r.failure));
    return r;
  }

  // The exit status, once everything is down (1 if the teardown failed
  // after a success).
  int finish(int status) {
    if (!teardown_.run() && status == 0) return 1;
    return status;
  }

  int one_boot() { return finish(boot(1, "command", false).status); }

  int two_boots() {
    BootOutcome first = boot(1, "command", o_.crash);
    std::string summary = "boot 1: " + exited(plan_.command, first.status);
    if (first.status != 0) {
      say(summary + "; stopping there (no " + std::string(o_.crash ? "power cut, no " : "") + "second boot)");
      first.qemu.reset();
      return finish(first.status);
    }
    summary += o_.crash ? "; " + cut_power(*first.qemu) : "; clean shutdown";
    check_interrupted();
    const BootOutcome second = boot(2, "check", false);
    const std::string replay = journal_replay_line(second.filesystem_log);
    if (!replay.empty()) say("boot 2: the kernel: " + replay);
    say(summary + "; boot 2: " + (replay.empty() ? "no journal replay" : "journal replayed") + "; " +
        exited(plan_.check, second.status));
    return finish(second.status);
  }

  // The power first, so nothing the guest still sends lands; then the
  // machine; then the power back for the next boot. Says what was lost.
  std::string cut_power(QemuProcess& qemu) {
    std::string answer;
    post(control_, crash_target(o_), &answer);
    qemu.kill_hard();
    post(control_, "/power-on");
    while (!answer.empty() && answer.back() == '\n') answer.pop_back();
    if (o_.verbose) say("POST " + crash_target(o_) + ": " + answer);
    const long long lost = writes_lost(answer);
    return "power cut (" + (lost < 0 ? std::string("?") : std::to_string(lost)) + " writes lost)";
  }

  const VmOptions& o_;
  std::optional<GuestKernel> kernel_;
  GuestTools tools_;
  std::vector<GuestModule> modules_;
  std::unique_ptr<ServerProcess> server_;
  Teardown teardown_;
  fs::path run_dir_, initrd_;
  std::string control_;
  std::vector<NbdDrive> drives_;
  std::vector<GuestForward> forwards_;              // the nbd transport's
  std::vector<std::vector<std::string>> nbd_attach_;  // and the guest's nbd-client commands
  std::vector<GuestPlan::NbdQueue> nbd_queues_;       // and queue settings
  std::optional<QemuTlsPsk> tls_;
  bool has_journal_ = false;
  GuestPlan plan_;
};

}  // namespace

int run_vm(const VmOptions& o) {
  catch_interrupts();
  VmRun run(o);
  return run.run();
}

}  // namespace nvj::cli
