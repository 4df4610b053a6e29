// SPDX-License-Identifier: BSD-3-Clause
// SIGINT and SIGTERM, caught: a long command (nvj crash, nvj experiment, nvj
// vm) stops at its next step, takes down what it made and says what it
// did, instead of dying with mounts, loop devices and servers left behind.
// One flag for the process: catch_interrupts() installs the handlers (again:
// the hook is replaced, nothing else), interrupted() reads the flag. The
// hook, if any, runs inside the handler and must be async-signal-safe (the
// workloads' tasks stop at once). Blocking calls are not restarted: a wait
// returns EINTR, and the caller looks at the flag.
#pragma once

#include <csignal>

namespace nvj::cli {

void catch_interrupts(void (*hook)() = nullptr);
bool interrupted();
// SIGINT or SIGTERM, whichever came first; 0 before either.
int interrupt_signal();
// The flag itself, for code that takes a pointer to it.
const volatile std::sig_atomic_t* interrupt_flag();

}  // namespace nvj::cli
