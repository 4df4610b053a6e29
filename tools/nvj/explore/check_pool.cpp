// SPDX-License-Identifier: BSD-3-Clause
#include "tools/nvj/explore/check_pool.h"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <stdexcept>
#include <string>

#include "common/json.h"
#include "tools/nvj/host/files/text_file.h"
#include "tools/nvj/host/processes/interrupt.h"

namespace nvj::cli {
namespace fs = std::filesystem;

namespace {

constexpr const char* kOutcomeFile = "outcome.json";

Json outcome_json(const WorkloadOutcome& o) {
  Json seconds = Json::array();
  for (const double s : o.seconds) seconds.push_back(s);
  return Json{{"seconds", seconds},          {"error", o.error},
              {"broke", o.broke},            {"signature", o.signature},
              {"oracle_error", o.oracle_error}, {"status", o.status},
              {"states", o.states},          {"failing", o.failing},
              {"failures", o.failures},      {"fstests_cut", o.fstests_cut},
              {"recovery", o.recovery},      {"interrupted", interrupted()}};
}

void read_outcome(const Json& j, WorkloadOutcome& o) {
  const auto& seconds = j.at("seconds");
  for (std::size_t k = 0; k < kExplorePhaseCount && k < seconds.size(); ++k) o.seconds[k] = seconds[k].get<double>();
  o.error = j.at("error").get<std::string>();
  o.broke = j.at("broke").get<std::set<std::string>>();
  o.signature = j.at("signature").get<std::string>();
  o.oracle_error = j.at("oracle_error").get<std::string>();
  o.status = j.at("status").get<int>();
  o.states = j.at("states").get<std::uint64_t>();
  o.failing = j.at("failing").get<std::uint64_t>();
  o.failures = j.at("failures");
  o.fstests_cut = j.at("fstests_cut");
  o.recovery = j.at("recovery");
}

// In the child: the check, its outcome (or what it threw) written, then
// out without the parent's destructors (the lab, the run folder are its).
[[noreturn]] void check_in_child(const ExploreContext& context, const CheckedWorkload& c,
                                 const workloads::ExploreTrace& trace, pid_t explorer) {
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != explorer) ::_exit(4);  // the explorer is gone already
  int code = 0;
  Json j;
  try {
    WorkloadOutcome o = c.outcome;
    check_workload(context, c.workload, c.dir, trace, o);
    j = outcome_json(o);
  } catch (const std::exception& e) {
    j = Json{{"exception", e.what()}};
    code = 3;
  }
  try {
    write_text_file(c.dir / kOutcomeFile, to_json_text(j));
  } catch (const std::exception&) {
    code = 5;
  }
  std::fflush(stdout);
  std::fflush(stderr);
  ::_exit(code);
}

}  // namespace

std::size_t default_check_slots() {
  const long cpus = ::sysconf(_SC_NPROCESSORS_ONLN);
  return cpus > 1 ? static_cast<std::size_t>(cpus) : 1;
}

CheckPool::CheckPool(const ExploreContext& context, std::size_t slots)
    : context_(context), slots_(std::max<std::size_t>(slots, 1)) {}

CheckPool::~CheckPool() { stop(); }

void CheckPool::start(std::uint64_t ordinal, const crashlab::explore::Workload& workload, const fs::path& dir,
                      RecordedWorkload recorded) {
  while (running_.size() >= slots_) reap(true);
  CheckedWorkload c{ordinal, workload, dir, std::move(recorded.outcome)};
  fs::remove(dir / kOutcomeFile);
  std::fflush(stdout);
  std::fflush(stderr);
  const pid_t explorer = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error(std::string("fork for the check of a workload: ") + std::strerror(errno));
  if (pid == 0) check_in_child(context_, c, recorded.trace, explorer);
  running_.push_back({pid, std::move(c)});
}

bool CheckPool::reap(bool block) {
  // Our children only, each by its PID: the explorer has others (its
  // server, the commands it runs) that their owners wait for.
  int status = 0;
  auto it = running_.end();
  while (!running_.empty()) {
    it = std::find_if(running_.begin(), running_.end(), [&status](const Running& r) {
      pid_t pid;
      do {
        pid = ::waitpid(r.pid, &status, WNOHANG);
      } while (pid < 0 && errno == EINTR);
      return pid == r.pid || (pid < 0 && errno == ECHILD);
    });
    if (it != running_.end() || !block) break;
    ::usleep(2000);
  }
  if (it == running_.end()) return false;
  CheckedWorkload c = std::move(it->checked);
  running_.erase(it);
  const fs::path file = c.dir / kOutcomeFile;
  if (!fs::exists(file))
    throw std::runtime_error("the check of workload " + std::to_string(c.ordinal) + " (" + c.workload.name +
                             ") ended with no outcome (" +
                             (WIFSIGNALED(status) ? "signal " + std::to_string(WTERMSIG(status))
                                                  : "status " + std::to_string(WEXITSTATUS(status))) +
                             ")");
  const Json j = parse_json(read_text_file(file), file.string());
  fs::remove(file);
  if (j.contains("exception")) throw std::runtime_error(j["exception"].get<std::string>());
  if (j.at("interrupted").get<bool>()) return true;  // stopped part-way: dropped, run again on --resume
  read_outcome(j, c.outcome);
  ended_.push_back(std::move(c));
  return true;
}

std::vector<CheckedWorkload> CheckPool::finished(bool all) {
  while (reap(all)) {
  }
  std::vector<CheckedWorkload> out;
  out.swap(ended_);
  return out;
}

void CheckPool::stop() noexcept {
  for (const Running& r : running_) ::kill(r.pid, SIGTERM);
  for (const Running& r : running_) {
    int status = 0;
    while (::waitpid(r.pid, &status, 0) < 0 && errno == EINTR) {
    }
  }
  for (const Running& r : running_) {
    std::error_code ignored;
    fs::remove(r.checked.dir / kOutcomeFile, ignored);
  }
  running_.clear();
}

}  // namespace nvj::cli
