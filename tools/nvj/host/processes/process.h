// SPDX-License-Identifier: BSD-3-Clause
// Child processes started by nvj: each one is stopped again by its PID.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <string>
#include <vector>

namespace nvj::cli {

struct SpawnOptions {
  std::string output_file;  // stdout and stderr go here ("" = inherit)
  bool new_session = false;  // setsid(): survives the terminal and our exit
  // NAME=VALUE entries: each one replaces our NAME in the child's
  // environment (which is ours otherwise); a NAME given twice takes the last
  // VALUE. The child sees each NAME once. An entry without '=' or with an
  // empty NAME is refused with std::invalid_argument.
  std::vector<std::string> env;
  std::string directory;  // its working directory ("" = ours)
  bool new_group = false;  // a process group of its own (wait_or_stop signals the group)
};

// Starts argv[0] (searched in PATH) with our environment and options.env.
// Throws std::runtime_error naming the program if it cannot be started.
pid_t spawn(const std::vector<std::string>& argv, const SpawnOptions& options = {});

// Waits for a child; returns its exit status (128 + signal if killed).
int wait_for(pid_t pid);

// Waits for a child as wait_for() does, but gives up once `give_up()` says
// so (asked every 50 ms): then SIGTERM to the child (to its process group,
// when it leads one: SpawnOptions::new_group), SIGKILL after `grace`, and
// its status once reaped.
int wait_or_stop(pid_t pid, const std::function<bool()>& give_up,
                 std::chrono::milliseconds grace = std::chrono::seconds(5));

// True while `pid` exists (a zombie child counts as gone once reaped).
bool alive(pid_t pid);

// SIGTERM, then SIGKILL after `grace`. If `pid` is our child, reaps it and
// returns its exit status as wait_for() does; otherwise returns -1.
int stop(pid_t pid, std::chrono::milliseconds grace = std::chrono::seconds(5));

struct RunResult {
  int status = 0;
  std::string output;  // stdout and stderr interleaved
};

// Runs a command to completion, capturing its output. `env` is NAME=VALUE
// entries that replace ours, as SpawnOptions::env. With a `timeout`, a
// command still running then is stopped and a std::runtime_error thrown.
RunResult run(const std::vector<std::string>& argv, const std::vector<std::string>& env = {},
              std::chrono::milliseconds timeout = std::chrono::milliseconds::zero());

// Like run(), but throws std::runtime_error with the command and its output
// if it exits non-zero.
std::string run_checked(const std::vector<std::string>& argv);

// The full path of a program found in PATH, or "" if there is none.
std::string which(const std::string& program);

// "a b 'c d'": for messages.
std::string quote(const std::vector<std::string>& argv);

}  // namespace nvj::cli
