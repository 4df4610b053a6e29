// SPDX-License-Identifier: BSD-3-Clause
#include "tools/nvj/host/processes/interrupt.h"

#include <signal.h>

namespace nvj::cli {

namespace {

volatile std::sig_atomic_t g_flag = 0;
volatile std::sig_atomic_t g_signal = 0;
void (*volatile g_hook)() = nullptr;

void on_signal(int signal) {
  if (g_signal == 0) g_signal = signal;
  g_flag = 1;
  if (void (*hook)() = g_hook) hook();
}

}  // namespace

void catch_interrupts(void (*hook)()) {
  g_hook = hook;
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0;  // no SA_RESTART: a blocking call returns EINTR
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

bool interrupted() { return g_flag != 0; }

int interrupt_signal() { return g_signal; }

const volatile std::sig_atomic_t* interrupt_flag() { return &g_flag; }

}  // namespace nvj::cli
