// SPDX-License-Identifier: BSD-3-Clause
#include "tools/workloads/task_group.h"

#include "common/duration.h"
#include "common/errno_name.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>

namespace nvj::workloads {
namespace {

enum : std::uint16_t { kProgress = 1, kReport = 2, kFailure = 3 };

struct Header {
  std::uint32_t task;
  std::uint16_t type;
  std::uint16_t length;
};
constexpr std::size_t kPiece = PIPE_BUF - sizeof(Header);

void write_all(int fd, const void* p, std::size_t n) {
  const auto* b = static_cast<const char*>(p);
  while (n > 0) {
    const ssize_t w = ::write(fd, b, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) ::_exit(3);  // the parent is gone
    b += w;
    n -= static_cast<std::size_t>(w);
  }
}

volatile std::sig_atomic_t g_stop = 0;  // set by stop_tasks()

// False at the end of the pipe, or when stop_tasks() interrupted the read.
bool read_all(int fd, void* p, std::size_t n) {
  auto* b = static_cast<char*>(p);
  while (n > 0) {
    const ssize_t r = ::read(fd, b, n);
    if (r < 0 && errno == EINTR) {
      if (g_stop != 0) return false;
      continue;
    }
    if (r <= 0) return false;
    b += r;
    n -= static_cast<std::size_t>(r);
  }
  return true;
}

}  // namespace

void TaskChannel::send(std::uint16_t type, const void* bytes, std::size_t n) {
  const auto* b = static_cast<const char*>(bytes);
  do {
    const std::size_t piece = std::min(n, kPiece);
    char message[PIPE_BUF];
    const Header h{task_, type, static_cast<std::uint16_t>(piece)};
    std::memcpy(message, &h, sizeof h);
    if (piece > 0) std::memcpy(message + sizeof h, b, piece);
    write_all(fd_, message, sizeof h + piece);  // <= PIPE_BUF: one atomic write
    b += piece;
    n -= piece;
  } while (n > 0);
}

void TaskChannel::progress() { send(kProgress, nullptr, 0); }
void TaskChannel::report(const void* bytes, std::size_t n) {
  if (n > 0) send(kReport, bytes, n);
}

void TaskChannel::fail(int error, const std::string& what) {
  std::string payload(sizeof error, '\0');
  std::memcpy(payload.data(), &error, sizeof error);
  payload += what.substr(0, kPiece - sizeof error);
  send(kFailure, payload.data(), payload.size());
}

Json failure_json(const std::optional<TaskFailure>& failure) {
  return failure ? Json(failure->describe()) : Json(nullptr);
}

std::string TaskFailure::describe() const {
  std::string s = "task " + std::to_string(task) + ": " + what;
  if (error != 0) s += ": " + errno_message(error) + " (" + errno_name(error) + ")";
  return s;
}

void stop_tasks() { g_stop = 1; }

TaskOutcome run_tasks(std::uint32_t n, const std::function<void(std::uint32_t, TaskChannel&)>& task,
                      const std::function<void(std::uint64_t)>& on_progress) {
  int results[2];
  int go[2];
  if (::pipe2(results, O_CLOEXEC) != 0 || ::pipe2(go, O_CLOEXEC) != 0)
    throw std::runtime_error(std::string("pipe: ") + errno_message(errno));
  std::fflush(nullptr);
  std::vector<pid_t> pids;
  // Only tasks not reaped yet: a reaped task's pid may belong to another process by now.
  const auto kill_from = [&](std::size_t first) {
    for (std::size_t i = first; i < pids.size(); ++i) ::kill(pids[i], SIGKILL);
  };
  for (std::uint32_t i = 0; i < n; ++i) {
    const pid_t pid = ::fork();
    if (pid < 0) {
      const int e = errno;
      kill_from(0);
      for (pid_t p : pids) ::waitpid(p, nullptr, 0);
      for (int fd : {results[0], results[1], go[0], go[1]}) ::close(fd);
      throw std::runtime_error("fork of task " + std::to_string(i) + ": " + errno_message(e));
    }
    if (pid == 0) {
      // A Ctrl-C ends the tasks even where the parent catches it to tear down.
      ::signal(SIGINT, SIG_DFL);
      ::signal(SIGTERM, SIG_DFL);
      ::close(results[0]);
      ::close(go[1]);
      char c;
      while (::read(go[0], &c, 1) < 0 && errno == EINTR) {
      }
      TaskChannel channel(results[1], i);
      try {
        task(i, channel);
      } catch (const TaskError& e) {
        channel.fail(e.error(), e.what());
        ::_exit(1);
      } catch (const std::exception& e) {
        channel.fail(0, e.what());
        ::_exit(1);
      }
      ::_exit(0);
    }
    pids.push_back(pid);
  }
  ::close(results[1]);
  ::close(go[0]);
  g_stop = 0;  // a stop before this run is its caller's to notice
  const auto start = std::chrono::steady_clock::now();
  ::close(go[1]);  // everyone starts now

  TaskOutcome out;
  out.reports.resize(n);
  out.progress.resize(n);
  std::uint64_t progress = 0;
  Header h{};
  char payload[PIPE_BUF];
  while (g_stop == 0 && read_all(results[0], &h, sizeof h)) {
    if (h.length > kPiece || !read_all(results[0], payload, h.length) || h.task >= n) break;
    if (h.type == kProgress) {
      ++out.progress[h.task];
      if (on_progress) on_progress(++progress);
    } else if (h.type == kReport) {
      out.reports[h.task].append(payload, h.length);
    } else if (h.type == kFailure && !out.failure && h.length >= sizeof(int)) {
      TaskFailure f;
      f.task = h.task;
      std::memcpy(&f.error, payload, sizeof(int));
      f.what.assign(payload + sizeof(int), h.length - sizeof(int));
      out.failure = f;
      kill_from(0);  // the first error ends the run (no task is reaped yet)
    }
  }
  if (g_stop != 0 && !out.failure) {
    out.failure = TaskFailure{0, "stopped by a signal", 0};
    kill_from(0);
  }
  ::close(results[0]);
  for (std::uint32_t i = 0; i < n; ++i) {
    int status = 0;
    while (::waitpid(pids[i], &status, 0) < 0 && errno == EINTR) {
    }
    if (!out.failure && !(WIFEXITED(status) && WEXITSTATUS(status) == 0)) {
      TaskFailure f;
      f.task = i;
      f.what = WIFSIGNALED(status) ? "killed by signal " + std::to_string(WTERMSIG(status))
                                   : "exited with status " + std::to_string(WEXITSTATUS(status));
      out.failure = f;
      kill_from(i + 1);
    }
  }
  out.seconds = seconds_since(start);
  return out;
}

}  // namespace nvj::workloads
