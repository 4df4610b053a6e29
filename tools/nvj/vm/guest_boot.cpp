// SPDX-License-Identifier: BSD-3-Clause
#include "tools/nvj/vm/guest_boot.h"

#include <stdexcept>
#include <thread>

#include "tools/nvj/vm/guest_console.h"

namespace nvj::cli {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

void pass_on(const std::vector<ConsoleLine>& lines, bool whole_console, std::FILE* out, std::FILE* err) {
  for (const auto& l : lines) {
    if (whole_console) {
      std::fprintf(out, "%s\n", l.text.c_str());
    } else if (l.kind == ConsoleLine::Kind::output) {
      std::fprintf(out, "%s\n", l.text.c_str());
    } else if (l.kind == ConsoleLine::Kind::kernel) {
      std::fprintf(err, "nvj vm: guest kernel: %s\n", without_timestamp(l.text).c_str());
    }
  }
  if (!lines.empty()) {
    std::fflush(out);
    std::fflush(err);
  }
}

}  // namespace

BootOutcome run_boot(const BootOptions& o, std::FILE* out, std::FILE* err) {
  BootOutcome r;
  GuestConsole console(o.token);
  const auto start = Clock::now();
  Clock::time_point begun, ended;
  r.qemu = std::make_unique<QemuProcess>(o.qemu, o.qemu_log);
  if (o.on_started) o.on_started(r.qemu->pid());
  const auto deadline = start + o.timeout;
  const auto give_up = [&](const std::string& why) {
    const std::string log = r.qemu->log();  // before it is stopped and says so
    r.qemu->stop();
    std::string message = o.label + ": " + why;
    if (!console.failure().empty()) message += ": the guest says: " + console.failure();
    const std::string tail = console.tail();
    message += tail.empty() ? "\nthe console is empty\n" : "\nthe console's last lines:\n" + tail;
    if (!log.empty()) message += "QEMU said: " + log;
    throw std::runtime_error(message);
  };
  for (;;) {
    const bool running = r.qemu->running();  // before reading: a guest that is gone has written everything
    pass_on(console.feed(r.qemu->read_console()), o.whole_console, out, err);
    if (console.begun() && begun == Clock::time_point{}) begun = Clock::now();
    if (console.ended() && ended == Clock::time_point{}) ended = Clock::now();
    if (console.ended() && o.leave_running) break;
    if (!running) {
      pass_on(console.finish(), o.whole_console, out, err);
      if (!console.ended())
        give_up(console.begun() ? "the guest stopped while the step ran"
                                : "the guest stopped before its step began (QEMU exit status " +
                                      std::to_string(r.qemu->exit_status()) + ")");
      break;
    }
    if (Clock::now() > deadline)
      give_up("no " + std::string(console.ended() ? "power-off" : "end of the step") + " after " +
              std::to_string(o.timeout.count()) + " s (--timeout)");
    if (o.check_interrupted) o.check_interrupted();  // QEMU goes with `r`
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  r.status = console.status();
  r.seconds_to_step = seconds_between(start, begun);
  r.step_seconds = seconds_between(begun, ended);
  r.unmounted = console.unmounted();
  r.failure = console.failure();
  r.filesystem_log = console.filesystem_log();
  if (!o.leave_running) r.qemu.reset();
  return r;
}

}  // namespace nvj::cli
