// SPDX-License-Identifier: BSD-3-Clause
// One boot of the guest: QEMU started, its console followed until /init's
// step has ended (and, unless the power is to be cut, until the guest has
// unmounted and powered off), the step's output passed on as it comes.
#pragma once

#include <chrono>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "tools/nvj/vm/qemu.h"

namespace nvj::cli {

struct BootOptions {
  QemuConfig qemu;
  std::filesystem::path qemu_log;
  std::string token;
  std::string label;              // "boot 1", for messages
  bool leave_running = false;     // return at the end marker with QEMU still running (the power cut follows)
  bool whole_console = false;     // pass every console line on, not only the step's output
  std::chrono::seconds timeout{300};
  std::function<void()> check_interrupted;  // throws to give up
  std::function<void(pid_t)> on_started;    // told QEMU's PID
};

struct BootOutcome {
  int status = -1;              // the step's exit status
  double seconds_to_step = 0;   // QEMU start to the begin marker: kernel, modules, mount
  double step_seconds = 0;      // begin to end marker
  bool unmounted = false;
  std::string failure;          // what /init said failed after the step (an unmount), or ""
  std::vector<std::string> filesystem_log;  // the kernel's mount-time ext4/jbd2 messages
  std::unique_ptr<QemuProcess> qemu;        // still running when leave_running
};

// Throws std::runtime_error when the step never ended (a kernel panic, a
// module or mount failure, the timeout), with the console's last lines.
// The step's output goes to `out`, kernel messages during it to `err`.
BootOutcome run_boot(const BootOptions& options, std::FILE* out, std::FILE* err);

}  // namespace nvj::cli
