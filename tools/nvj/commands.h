// SPDX-License-Identifier: BSD-3-Clause
// The nvj commands, each declared in its own file: its options, its help
// and what runs it (common/command_line.h says how, and the exit statuses).
#pragma once

#include "common/command_line.h"
#include "tools/nvj/client/tls_psk.h"

namespace nvj::cli {

// Every command below, in the order `nvj --help` lists them.
void add_commands(CommandLine& nvj);

// --tls-psk FILE and --tls-username NAME, for a server reached as
// `server` (what the help calls it: "an nbds:// SERVER").
void add_tls_options(Command& app, TlsOptions& tls, const std::string& server);

CommandRun declare_demo(Command& app);
CommandRun declare_mkfs(Command& app);
CommandRun declare_journal(Command& app);
CommandRun declare_attach(Command& app);
CommandRun declare_detach(Command& app);
CommandRun declare_stats(Command& app);
CommandRun declare_crash(Command& app);
CommandRun declare_bench(Command& app);
CommandRun declare_experiment(Command& app);
CommandRun declare_vm(Command& app);
CommandRun declare_kernel(Command& app);

}  // namespace nvj::cli
