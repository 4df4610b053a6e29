// SPDX-License-Identifier: BSD-3-Clause
#include "tools/nvj/host/processes/run_folder.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

#include "common/unique_fd.h"
#include "tools/nvj/host/devices/attach.h"
#include "tools/nvj/host/devices/loop_device.h"
#include "tools/nvj/host/processes/process.h"

namespace nvj::cli {

namespace fs = std::filesystem;

namespace {

// A process's start time (field 22 of /proc/PID/stat, in clock ticks since
// boot): with its PID, it names the process.
std::string start_time(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat;
  if (!std::getline(in, stat)) return "";
  const std::size_t close = stat.rfind(')');  // the command name may hold spaces
  if (close == std::string::npos) return "";
  std::istringstream fields(stat.substr(close + 2));
  std::string field;
  for (int i = 3; i <= 22 && fields >> field; ++i)
    if (i == 22) return field;
  return "";
}

std::string comm_of(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/comm");
  std::string name;
  std::getline(in, name);
  return name;
}

// Whether the owner named in `folder`/owner is gone. No owner file: unknown,
// so not stale.
bool owner_gone(const fs::path& folder) {
  std::ifstream in(folder / "owner");
  long pid = 0;
  std::string started;
  if (!(in >> pid >> started) || pid <= 0) return false;
  return start_time(static_cast<pid_t>(pid)) != started;
}

bool under(const fs::path& path, const fs::path& folder) {
  const std::string p = path.lexically_normal().string(), f = folder.lexically_normal().string();
  return p.size() > f.size() && p.compare(0, f.size(), f) == 0 && p[f.size()] == '/';
}

// Kills the processes whose working directory, root or open files are in
// `dir` (what fuser -k does), so that it can be unmounted.
int kill_users(const fs::path& dir) {
  std::vector<pid_t> killed_pids;
  std::error_code ec;
  for (const auto& proc : fs::directory_iterator("/proc", ec)) {
    const std::string name = proc.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    const auto pid = static_cast<pid_t>(std::stol(name));
    if (pid == ::getpid()) continue;
    bool uses = false;
    for (const char* link : {"cwd", "root"}) {
      std::error_code e;
      const fs::path target = fs::read_symlink(proc.path() / link, e);
      uses = uses || (!e && (target == dir || under(target, dir)));
    }
    std::error_code e;
    for (const auto& fd : fs::directory_iterator(proc.path() / "fd", e)) {
      if (uses) break;
      std::error_code f;
      const fs::path target = fs::read_symlink(fd.path(), f);
      uses = !f && under(target, dir);
    }
    if (uses && ::kill(pid, SIGKILL) == 0) killed_pids.push_back(pid);
  }
  // Gone once /proc forgets them (a zombie whose parent died is reaped by init).
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  for (const pid_t pid : killed_pids)
    while (fs::exists("/proc/" + std::to_string(pid) + "/cwd") && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
  return static_cast<int>(killed_pids.size());
}

bool is_mount_point(const fs::path& dir) {
  std::ifstream mounts("/proc/self/mounts");
  std::string device, where;
  std::string rest;
  while (mounts >> device >> where && std::getline(mounts, rest))
    if (where == dir.string()) return true;
  return false;
}

// Undoes what the run in `folder` left, in the folders it made inside it
// first (a Testbed of their own each, as a crash during recovery's is:
// KIND-PID/recovery-PID-N, left mounted and served when its process is
// killed with the run's), `depth` levels down; `did` gains what it did, in
// words, each thing done inside preceded by `inside` (the inner folder's
// name and a colon).
void undo(const fs::path& folder, int depth, std::vector<std::string>& did, const std::string& inside = "") {
  const auto note = [&](const std::string& what) { did.push_back(inside + what); };
  std::error_code ec;
  if (depth > 0)
    for (const auto& entry : fs::directory_iterator(folder, ec))
      if (const std::string name = entry.path().filename().string();
          entry.is_directory() && !entry.is_symlink() && !is_mount_point(entry.path()) && name != "attach" &&
          name != "server")  // this folder's own, undone below
        undo(entry.path(), depth - 1, did, inside + name + ": ");
  // The mount point, the Testbed's (mnt) and any other directly inside.
  for (const auto& entry : fs::directory_iterator(folder, ec)) {
    if (!entry.is_directory() || !is_mount_point(entry.path())) continue;
    if (const int n = kill_users(entry.path())) note("killed " + std::to_string(n) + " processes working in " + entry.path().string());
    if (::umount2(entry.path().c_str(), 0) == 0)
      note("unmounted " + entry.path().string());
    else
      note("could not unmount " + entry.path().string() + ": " + std::strerror(errno));
  }
  // Its exports, by the undo log.
  if (fs::exists(folder / "attach" / "attach.log")) {
    try {
      detach(folder / "attach");
      note("detached its exports");
    } catch (const std::exception& e) {
      note(std::string("could not detach its exports: ") + e.what());
    }
  }
  // Its server, if that process is still nbdkit.
  {
    std::ifstream in(folder / "server" / "nbdkit.pid");
    long pid = 0;
    if (in >> pid && pid > 0 && comm_of(static_cast<pid_t>(pid)) == "nbdkit") {
      stop(static_cast<pid_t>(pid));  // SIGTERM, SIGKILL after 5 s; gone when it returns
      note("stopped its server (nbdkit " + std::to_string(pid) + ")");
    }
  }
  // Loop devices over files of its scratch folders, and the folders.
  std::ifstream scratch_list(folder / "scratch");
  for (std::string line; std::getline(scratch_list, line);) {
    if (line.empty()) continue;
    const fs::path scratch = line;
    for (const auto& dev : fs::directory_iterator("/sys/block", ec)) {
      const std::string name = dev.path().filename().string();
      if (name.rfind("loop", 0) != 0) continue;
      const std::string device = "/dev/" + name;
      const std::string file = loop_backing_file(device);
      if (file.empty() || !under(file, scratch)) continue;
      try {
        loop_detach(device);
        note("detached " + device);
      } catch (const std::exception& e) {
        note("could not detach " + device + ": " + e.what());
      }
    }
    if (fs::remove_all(scratch, ec) > 0) note("removed " + scratch.string());
  }
}

// Undoes what the run in `folder` left and removes it; returns what it
// did, in words.
std::string clear(const fs::path& folder) {
  std::vector<std::string> did;
  const auto note = [&](const std::string& what) { did.push_back(what); };
  undo(folder, 2, did);
  std::error_code ec;
  fs::remove_all(folder, ec);
  if (ec) note("could not remove " + folder.string() + ": " + ec.message());
  std::string text = folder.string() + " (";
  for (std::size_t i = 0; i < did.size(); ++i) text += (i == 0 ? "" : ", ") + did[i];
  if (did.empty()) text += "nothing but the folder";
  return text + ")";
}

}  // namespace

std::vector<std::string> clear_stale_runs(const std::string& kind, const fs::path& root) {
  std::vector<std::string> cleared;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(root, ec)) {
    const std::string name = entry.path().filename().string();
    if (!entry.is_directory() || name.rfind(kind + "-", 0) != 0) continue;
    if (!owner_gone(entry.path())) continue;
    // Two nvj starting at once both find it stale: the one that holds the
    // lock on its owner file clears it; the other leaves it, as it does a
    // folder the first has removed by the time it has the lock.
    const UniqueFd owner(::open((entry.path() / "owner").c_str(), O_RDONLY | O_CLOEXEC));
    if (!owner.valid() || ::flock(owner.get(), LOCK_EX | LOCK_NB) != 0) continue;
    if (fs::exists(entry.path() / "owner")) cleared.push_back(clear(entry.path()));
  }
  return cleared;
}

RunFolder::RunFolder(const std::string& kind) {
  for (const std::string& line : clear_stale_runs(kind))
    std::fprintf(stderr, "nvj: cleared what a run that was killed left in %s\n", line.c_str());
  path_ = kRunRoot / (kind + "-" + std::to_string(::getpid()));
  fs::create_directories(path_);
  std::ofstream owner(path_ / "owner");
  owner << ::getpid() << " " << start_time(::getpid()) << "\n";
  if (!owner) throw std::runtime_error("cannot write " + (path_ / "owner").string());
}

RunFolder::~RunFolder() {
  if (keep_) return;
  std::error_code ignored;
  fs::remove_all(path_, ignored);
}

void RunFolder::note_scratch(const fs::path& scratch) const {
  std::ofstream out(path_ / "scratch", std::ios::app);
  out << fs::absolute(scratch).string() << "\n";
  out.flush();
}

}  // namespace nvj::cli
