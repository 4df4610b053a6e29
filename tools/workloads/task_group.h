// SPDX-License-Identifier: BSD-3-Clause
// TaskGroup: runs N copies of a task, each in its own process (as the seeds'
// load generators fork theirs), released together, reporting back through
// one pipe; the first task to fail ends the run: the others are killed and
// its error (what it was doing, errno) is kept.
//
// Messages are written to the pipe in pieces of at most PIPE_BUF bytes, so
// pieces of different tasks never interleave; a task's report is the
// concatenation of its report pieces.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/json.h"

namespace nvj::workloads {

// Thrown by a task: what it was doing and the errno it got.
class TaskError : public std::runtime_error {
 public:
  TaskError(const std::string& what, int error) : std::runtime_error(what), error_(error) {}
  int error() const { return error_; }

 private:
  int error_;
};

// A task's way back to the parent.
class TaskChannel {
 public:
  TaskChannel(int fd, std::uint32_t task) : fd_(fd), task_(task) {}
  void progress();                              // one unit of work done
  void report(const void* bytes, std::size_t n);  // appended to the task's report
  void fail(int error, const std::string& what);  // run_tasks sends a task's error with it

 private:
  void send(std::uint16_t type, const void* bytes, std::size_t n);
  int fd_;
  std::uint32_t task_;
};

struct TaskFailure {
  std::uint32_t task = 0;
  std::string what;  // "write of chunk 12 to d3/t17"
  int error = 0;     // errno, 0 if the task died without saying
  std::string describe() const;  // "task 17: write of chunk 12 to d3/t17: No space left on device (ENOSPC)"
};

struct TaskOutcome {
  double seconds = 0;                          // release to the last task's end
  std::vector<std::string> reports;            // per task
  std::vector<std::uint64_t> progress;         // units per task
  std::optional<TaskFailure> failure;          // the first one
};

// Runs `task(i, channel)` for i in [0, n) in n processes. `on_progress` is
// called in the parent with the number of progress units seen so far.
TaskOutcome run_tasks(std::uint32_t n, const std::function<void(std::uint32_t, TaskChannel&)>& task,
                      const std::function<void(std::uint64_t)>& on_progress = {});

// Async-signal-safe, for the signal handlers of commands that run workloads:
// a run_tasks() in progress kills its tasks and returns, its failure
// "stopped by a signal". (A signal to the parent alone would otherwise
// leave the tasks running to their end.)
void stop_tasks();

// A failure's description as a JSON string, or null when there is none.
Json failure_json(const std::optional<TaskFailure>& failure);

}  // namespace nvj::workloads
