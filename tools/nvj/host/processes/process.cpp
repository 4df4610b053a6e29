// SPDX-License-Identifier: BSD-3-Clause
#include "tools/nvj/host/processes/process.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string_view>
#include <thread>

#include "common/unique_fd.h"

extern char** environ;

namespace nvj::cli {
namespace {

std::vector<char*> c_strings(std::vector<std::string>& v) {
  std::vector<char*> out;
  out.reserve(v.size() + 1);
  for (auto& s : v) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

std::string_view name_of(std::string_view entry) { return entry.substr(0, entry.find('=')); }

// Our environment with `extra`'s entries in place of ours of the same name,
// each name once (glibc's getenv takes the first of two, a shell the last:
// a duplicate would make the caller's value depend on who reads it).
std::vector<std::string> child_environment(const std::vector<std::string>& extra) {
  std::vector<std::string> chosen;  // extra's entries, the last one of each name
  for (const std::string& entry : extra) {
    const std::size_t eq = entry.find('=');
    if (eq == std::string::npos || eq == 0)
      throw std::invalid_argument("environment entry '" + entry + "' is not NAME=VALUE");
    const auto same = std::find_if(chosen.begin(), chosen.end(),
                                   [&](const std::string& c) { return name_of(c) == name_of(entry); });
    if (same != chosen.end()) {
      *same = entry;
    } else {
      chosen.push_back(entry);
    }
  }
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string_view name = name_of(*e);
    if (std::none_of(chosen.begin(), chosen.end(), [&](const std::string& c) { return name_of(c) == name; }))
      env.emplace_back(*e);
  }
  env.insert(env.end(), chosen.begin(), chosen.end());
  return env;
}

}  // namespace

std::string quote(const std::vector<std::string>& argv) {
  std::string out;
  for (const auto& a : argv) {
    if (!out.empty()) out += ' ';
    if (a.find_first_of(" \t'\"$") == std::string::npos && !a.empty())
      out += a;
    else
      out += "'" + a + "'";
  }
  return out;
}

std::string which(const std::string& program) {
  if (program.find('/') != std::string::npos) return ::access(program.c_str(), X_OK) == 0 ? program : "";
  const char* path = std::getenv("PATH");
  std::string dirs = path != nullptr ? path : "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
  std::size_t start = 0;
  while (start <= dirs.size()) {
    const std::size_t end = std::min(dirs.find(':', start), dirs.size());
    const std::string candidate = dirs.substr(start, end - start) + "/" + program;
    struct stat st {};
    if (::stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(candidate.c_str(), X_OK) == 0)
      return candidate;
    start = end + 1;
  }
  return "";
}

pid_t spawn(const std::vector<std::string>& argv, const SpawnOptions& options) {
  if (argv.empty()) throw std::invalid_argument("spawn: empty command");
  const std::string program = which(argv[0]);
  if (program.empty()) throw std::runtime_error(argv[0] + ": not found in PATH (is it installed?)");
  std::vector<std::string> args = argv;
  std::vector<std::string> env = child_environment(options.env);
  auto c_args = c_strings(args);
  auto c_env = c_strings(env);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (!options.output_file.empty()) {
    posix_spawn_file_actions_addopen(&actions, 1, options.output_file.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    posix_spawn_file_actions_adddup2(&actions, 1, 2);
  }
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  if (!options.directory.empty()) posix_spawn_file_actions_addchdir_np(&actions, options.directory.c_str());
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&attr, &none);
  sigset_t all;
  sigfillset(&all);
  posix_spawnattr_setsigdefault(&attr, &all);
  short flags = POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF;
  if (options.new_session) flags = static_cast<short>(flags | POSIX_SPAWN_SETSID);
  if (options.new_group) {
    flags = static_cast<short>(flags | POSIX_SPAWN_SETPGROUP);
    posix_spawnattr_setpgroup(&attr, 0);
  }
  posix_spawnattr_setflags(&attr, flags);

  pid_t pid = -1;
  const int err = posix_spawn(&pid, program.c_str(), &actions, &attr, c_args.data(), c_env.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (err != 0) throw std::runtime_error("cannot start " + program + ": " + std::strerror(err));
  return pid;
}

namespace {

int decode_status(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}

// Reaps `pid` if it is our child and has ended: true, with its status.
bool reap(pid_t pid, int& status) {
  int raw = 0;
  if (::waitpid(pid, &raw, WNOHANG) != pid) return false;
  status = decode_status(raw);
  return true;
}

}  // namespace

int wait_for(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return -1;
  }
  return decode_status(status);
}

int wait_or_stop(pid_t pid, const std::function<bool()>& give_up, std::chrono::milliseconds grace) {
  int status = 0;
  while (!reap(pid, status)) {
    if (give_up()) {
      const bool leads = ::getpgid(pid) == pid;
      ::kill(leads ? -pid : pid, SIGTERM);
      const auto deadline = std::chrono::steady_clock::now() + grace;
      while (!reap(pid, status)) {
        if (std::chrono::steady_clock::now() > deadline) {
          ::kill(leads ? -pid : pid, SIGKILL);
          return wait_for(pid);
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
      if (leads) ::kill(-pid, SIGKILL);  // what the leader left of its group
      return status;
    }
    if (::kill(pid, 0) != 0 && errno == ESRCH) return -1;  // gone, and not our child
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return status;
}

bool alive(pid_t pid) {
  if (pid <= 0) return false;
  int status = 0;
  if (reap(pid, status)) return false;
  return ::kill(pid, 0) == 0 || errno == EPERM;
}

int stop(pid_t pid, std::chrono::milliseconds grace) {
  if (pid <= 0) return -1;
  int status = -1;
  if (reap(pid, status) || ::kill(pid, SIGTERM) != 0) return status;
  const auto deadline = std::chrono::steady_clock::now() + grace;
  bool signalled_kill = false;
  for (;;) {
    if (reap(pid, status)) return status;
    if (::kill(pid, 0) != 0 && errno == ESRCH) return -1;  // gone, and not our child
    if (!signalled_kill && std::chrono::steady_clock::now() > deadline) {
      ::kill(pid, SIGKILL);
      signalled_kill = true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

namespace {

// Everything in the file `fd` is open on, from its start.
std::string read_from_start(int fd) {
  std::string out;
  char buffer[65536];
  for (off_t at = 0;;) {
    const ssize_t n = ::pread(fd, buffer, sizeof buffer, at);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw std::runtime_error(std::string("reading a command's output: ") + std::strerror(errno));
    if (n == 0) return out;
    out.append(buffer, static_cast<std::size_t>(n));
    at += n;
  }
}

}  // namespace

RunResult run(const std::vector<std::string>& argv, const std::vector<std::string>& env,
              std::chrono::milliseconds timeout) {
  // The output goes to a file unlinked as soon as it is made: the child
  // opens it through our descriptor (/proc/PID/fd/N), and it is gone with
  // us, even after a SIGKILL at any moment.
  char templ[] = "/tmp/nvj-run-XXXXXX";
  const UniqueFd output(::mkostemp(templ, O_CLOEXEC));
  if (output.get() < 0) throw std::runtime_error(std::string("mkostemp: ") + std::strerror(errno));
  ::unlink(templ);
  const std::string through =
      "/proc/" + std::to_string(::getpid()) + "/fd/" + std::to_string(output.get());
  const pid_t pid = spawn(argv, SpawnOptions{through, false, env, {}});
  RunResult result;
  if (timeout == std::chrono::milliseconds::zero()) {
    result.status = wait_for(pid);
  } else {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (!reap(pid, result.status)) {
      if (std::chrono::steady_clock::now() > deadline) {
        stop(pid);
        throw std::runtime_error(quote(argv) + " was still running after " + std::to_string(timeout.count()) +
                                 " ms");
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  }
  result.output = read_from_start(output.get());
  return result;
}

std::string run_checked(const std::vector<std::string>& argv) {
  RunResult r = run(argv);
  if (r.status != 0) {
    std::string out = r.output;
    while (!out.empty() && out.back() == '\n') out.pop_back();
    throw std::runtime_error(quote(argv) + " failed (exit " + std::to_string(r.status) + ")" +
                             (out.empty() ? "" : ": " + out));
  }
  return r.output;
}

}  // namespace nvj::cli
