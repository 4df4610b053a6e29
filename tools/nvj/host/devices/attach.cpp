// SPDX-License-Identifier: BSD-3-Clause
#include "tools/nvj/host/devices/attach.h"

#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "tools/nvj/host/devices/loop_device.h"
#include "tools/nvj/host/devices/undo_log.h"
#include "tools/nvj/host/files/text_file.h"
#include "tools/nvj/host/processes/process.h"

namespace nvj::cli {
namespace fs = std::filesystem;
namespace {

constexpr auto kReadyTimeout = std::chrono::seconds(20);

UndoLog log_in(const fs::path& state_dir) { return UndoLog(state_dir / "attach.log"); }

bool kernel_has_nbd() { return fs::exists("/sys/module/nbd") && !which("nbd-client").empty(); }

// The nbdfuse process of a FUSE mount: never signal a PID that was reused.
bool is_nbdfuse(pid_t pid) {
  std::string comm = read_text_file("/proc/" + std::to_string(pid) + "/comm");
  return comm.rfind("nbdfuse", 0) == 0;
}

std::string attach_fuse_loop(const std::string& name, const ServerAddress& server, const fs::path& state_dir,
                             bool direct_io, unsigned sector_size, UndoLog& log) {
  const fs::path mountpoint = state_dir / name;
  fs::create_directories(mountpoint);
  log.append({"dir", {mountpoint.string()}});

  const fs::path pidfile = state_dir / (name + ".nbdfuse.pid");
  const fs::path output = state_dir / (name + ".nbdfuse.log");
  fs::remove(pidfile);
  std::vector<std::string> argv{"nbdfuse", "-P", pidfile.string(), (mountpoint / "dev").string()};
  if (server.tls()) {
    if (which("nbdkit").empty()) throw std::runtime_error("attaching over TLS needs nbdkit (its nbd plugin) on this host");
    // nbdfuse cannot be given the key (its URIs may not name a local file):
    // it runs nbdkit's nbd plugin as its server, which holds the TLS
    // connection (one connection: no multi-conn then).
    argv.insert(argv.end(), {"--command", "nbdkit", "-s", "--exit-with-parent", "nbd"});
    const auto params = server.nbd_plugin_params(name);
    argv.insert(argv.end(), params.begin(), params.end());
  } else {
    argv.push_back(server.uri_for(name));
  }
  const pid_t pid = spawn(argv, SpawnOptions{output.string(), true, {}, {}});
  log.append({"fuse", {mountpoint.string(), std::to_string(pid)}});

  const auto deadline = std::chrono::steady_clock::now() + kReadyTimeout;
  while (!fs::exists(pidfile)) {
    if (!alive(pid)) throw std::runtime_error("nbdfuse for export '" + name + "' exited: " + read_text_file(output));
    if (std::chrono::steady_clock::now() > deadline)
      throw std::runtime_error("nbdfuse for export '" + name + "' was not ready after 20 s");
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  const std::string file = (mountpoint / "dev").string();
  std::string device = loop_attach(file, direct_io, sector_size);
  log.append({"loop", {device, file}});
  // A device whose discard limit an earlier attach left at 0 (it was held
  // open at that detach) is given up for a fresh one, made with the
  // kernel's defaults: the limit cannot be raised again. (Its undo step
  // finds it unbound from our file and leaves it.)
  for (int retry = 0; retry < 3 && discard_limit_stuck(device); ++retry) {
    loop_detach(device);
    const bool removed = loop_remove(device);
    device = loop_attach(file, direct_io, sector_size);
    log.append({"loop", {device, file}});
    if (!removed) break;  // still held: the kernel may give it back, stuck
  }
  // The kernel turns direct I/O off where the file cannot take it, and says
  // nothing: ask.
  if (direct_io && read_text_file("/sys/block/" + device.substr(device.rfind('/') + 1) + "/loop/dio").rfind('1', 0) != 0)
    throw std::runtime_error(device + " on " + file + ": the kernel would not do direct I/O to it (attach with --buffered)");
  return device;
}

std::string attach_nbd_client(const std::string& name, const ServerAddress& server, unsigned sector_size,
                              UndoLog& log) {
  if (server.socket().empty()) throw std::runtime_error("nbd-client attach needs a Unix socket server address");
  if (server.tls()) throw std::runtime_error("nbd-client attach does not do TLS: use --method fuse");
  for (int n = 0; n < 256; ++n) {
    const std::string dev = "/dev/nbd" + std::to_string(n);
    if (!fs::exists(dev)) break;
    if (fs::exists("/sys/block/nbd" + std::to_string(n) + "/pid")) continue;
    run_checked(nbd_client_argv(NbdClientServer{server.socket(), {}, {}}, name, sector_size, dev));
    log.append({"nbd", {dev}});
    return dev;
  }
  throw std::runtime_error("no free /dev/nbdN device");
}

// Gives `device` what export `name` tells the host, and checks that the
// kernel took it.
QueueSettings configure_queue(const std::string& name, const std::string& device, const ExportTraits& traits,
                              const std::string& scheduler, UndoLog& log) {
  log.append({"queue", {device, read_queue_settings(device).scheduler}});
  const QueueSettings want{traits.rotational, traits.write_back, traits.trim, scheduler};
  try {
    apply_queue_settings(device, want);
  } catch (const std::runtime_error& e) {
    throw std::runtime_error("export '" + name + "' on " + device + ": " + e.what());
  }
  if (const unsigned sector = logical_block_size(device); sector != traits.logical_sector)
    throw std::runtime_error("export '" + name + "' on " + device + ": the kernel gave it " + std::to_string(sector) +
                             "-byte sectors, not the export's " + std::to_string(traits.logical_sector));
  return want;
}

// Undoes one step; throws if it cannot.
void undo(const UndoStep& step) {
  if (step.kind == "queue") {
    // The device keeps its scheduler once released: give it back its own.
    if (fs::exists(step.args.at(0))) set_scheduler(step.args.at(0), step.args.at(1));
  } else if (step.kind == "loop") {
    const std::string& dev = step.args.at(0);
    const std::string where = mount_point_of(dev);
    if (!where.empty()) throw std::runtime_error(dev + " is mounted on " + where + ": unmount it first");
    // Only if it is still bound to our file: the number may have been reused.
    if (loop_backing_file(dev) == step.args.at(1)) {
      loop_detach(dev);
      // Its queue settings would outlive it: a fresh device for the next user.
      if (!loop_remove(dev))
        std::fprintf(stderr, "nvj detach: %s is held open elsewhere: it keeps the queue settings nvj attach gave it\n",
                     dev.c_str());
    }
  } else if (step.kind == "nbd") {
    const std::string& dev = step.args.at(0);
    const std::string where = mount_point_of(dev);
    if (!where.empty()) throw std::runtime_error(dev + " is mounted on " + where + ": unmount it first");
    run_checked({"nbd-client", "-d", dev});
  } else if (step.kind == "fuse") {
    const std::string& mountpoint = step.args.at(0);
    const auto pid = static_cast<pid_t>(std::stol(step.args.at(1)));
    // Unmounting makes nbdfuse exit by itself (its manual says not to kill it).
    if (::umount2(mountpoint.c_str(), 0) != 0 && errno != EINVAL && errno != ENOENT) {
      if (errno != EBUSY) throw std::runtime_error("umount " + mountpoint + ": " + std::strerror(errno));
      if (::umount2(mountpoint.c_str(), MNT_DETACH) != 0)
        throw std::runtime_error("umount " + mountpoint + ": " + std::strerror(errno));
    }
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (alive(pid) && is_nbdfuse(pid) && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    if (alive(pid) && is_nbdfuse(pid)) stop(pid);
  } else if (step.kind == "dir") {
    std::error_code ec;
    fs::remove(step.args.at(0), ec);
    if (ec && ec != std::errc::no_such_file_or_directory)
      throw std::runtime_error("rmdir " + step.args.at(0) + ": " + ec.message());
  } else {
    throw std::runtime_error("unknown step '" + step.kind + "' in the attach log");
  }
}

}  // namespace

std::vector<std::string> nbd_client_argv(const NbdClientServer& server, const std::string& name, unsigned sector_size,
                                         const std::string& device) {
  std::vector<std::string> argv{"nbd-client"};
  if (!server.socket.empty())
    argv.insert(argv.end(), {"-unix", server.socket});
  else
    argv.insert(argv.end(), {server.host, server.port.empty() ? "10809" : server.port});
  argv.insert(argv.end(), {"-N", name, "-b", std::to_string(sector_size), device});
  return argv;
}

fs::path default_state_dir(const std::string& name) { return fs::path("/run/nvjournal/attach") / name; }

std::string mount_point_of(const std::string& device) {
  struct stat st {};
  if (::stat(device.c_str(), &st) != 0 || !S_ISBLK(st.st_mode)) return "";
  const std::string want = std::to_string(major(st.st_rdev)) + ":" + std::to_string(minor(st.st_rdev));
  std::ifstream in("/proc/self/mountinfo");
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream f(line);
    std::string id, parent, majmin, root, mountpoint;
    f >> id >> parent >> majmin >> root >> mountpoint;
    if (majmin == want) return mountpoint;
  }
  return "";
}

std::map<std::string, std::string> parse_schedulers(const std::vector<std::string>& given,
                                                    const std::vector<std::string>& exports) {
  static const std::set<std::string, std::less<>> kKnown{"none", "mq-deadline", "bfq", "kyber"};
  std::map<std::string, std::string> out;
  for (const std::string& item : given) {
    const std::size_t eq = item.find('=');
    const std::string scheduler = eq == std::string::npos ? item : item.substr(eq + 1);
    if (!kKnown.contains(scheduler))
      throw std::invalid_argument("--scheduler " + item + ": '" + scheduler +
                                  "' is no I/O scheduler of Linux (none, mq-deadline, bfq or kyber)");
    if (eq == std::string::npos) {
      for (const auto& name : exports) out.try_emplace(name, scheduler);
      continue;
    }
    const std::string name = item.substr(0, eq);
    if (std::find(exports.begin(), exports.end(), name) == exports.end())
      throw std::invalid_argument("--scheduler " + item + ": no export '" + name + "' is being attached");
    out[name] = scheduler;
  }
  return out;
}

std::vector<AttachedExport> attach(const AttachOptions& options) {
  const ServerAddress server = ServerAddress::parse(options.server, options.tls);
  UndoLog log = log_in(options.state_dir);
  if (log.exists())
    throw std::runtime_error("an attachment is recorded in " + options.state_dir.string() +
                             " already: run nvj detach first");

  std::vector<std::string> wanted = options.exports;
  const auto listed = server.list_exports();
  if (wanted.empty())
    for (const auto& e : listed) wanted.push_back(e.name);
  for (const auto& w : wanted) {
    bool found = false;
    for (const auto& e : listed) found = found || e.name == w;
    if (!found) throw std::runtime_error("the server at " + server.text() + " has no export named '" + w + "'");
  }
  AttachMethod method = options.method;
  if (method == AttachMethod::automatic)
    method = kernel_has_nbd() && !server.socket().empty() && !server.tls() ? AttachMethod::nbd_client
                                                                           : AttachMethod::fuse_loop;

  const auto schedulers = parse_schedulers(options.schedulers, wanted);

  fs::create_directories(options.state_dir);
  std::vector<AttachedExport> result;
  try {
    log.append({"server", {server.text()}});
    for (const auto& name : wanted) {
      const ExportTraits traits = query_export_traits(server, name);
      const std::string device =
          method == AttachMethod::nbd_client
              ? attach_nbd_client(name, server, traits.logical_sector, log)
              : attach_fuse_loop(name, server, options.state_dir, options.direct_io, traits.logical_sector, log);
      const auto it = schedulers.find(name);
      const std::string scheduler = it != schedulers.end() ? it->second : default_scheduler(traits.rotational);
      const QueueSettings queue = configure_queue(name, device, traits, scheduler, log);
      log.append({"export", {name, device}});
      result.push_back({name, device, traits, queue});
    }
  } catch (const std::exception& e) {
    try {
      detach(options.state_dir);
    } catch (const std::exception& cleanup) {
      throw std::runtime_error(std::string(e.what()) + "; undoing the attach also failed: " + cleanup.what());
    }
    throw;
  }
  return result;
}

std::vector<AttachedExport> attached(const fs::path& state_dir) {
  std::vector<AttachedExport> out;
  for (const auto& step : log_in(state_dir).read())
    if (step.kind == "export" && step.args.size() == 2) {
      AttachedExport e;
      e.name = step.args[0];
      e.device = step.args[1];
      out.push_back(e);
    }
  return out;
}

void detach(const fs::path& state_dir) {
  UndoLog log = log_in(state_dir);
  if (!log.exists()) throw std::runtime_error("nothing is attached from " + state_dir.string());
  std::vector<UndoStep> steps = log.read();
  while (!steps.empty()) {
    const UndoStep& step = steps.back();
    if (step.kind != "server" && step.kind != "export") {
      try {
        undo(step);
      } catch (...) {
        log.rewrite(steps);  // keep what is left, so detach can be run again
        throw;
      }
    }
    steps.pop_back();
  }
  log.rewrite(steps);
  for (const auto& leftover : fs::directory_iterator(state_dir))
    if (leftover.path().extension() == ".log" || leftover.path().extension() == ".pid") fs::remove(leftover.path());
  std::error_code ec;
  fs::remove(state_dir, ec);  // only if empty
}

}  // namespace nvj::cli
