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
void add_tls_options(CLI::App& app, TlsOptions& tls, const std::string& server);

CommandRun declare_demo(CLI::App& app);
CommandRun declare_mkfs(CLI::App& app);
CommandRun declare_journal(CLI::App& app);
CommandRun declare_attach(CLI::App& app);
CommandRun declare_detach(CLI::App& app);
CommandRun declare_stats(CLI::App& app);
CommandRun declare_bench(CLI::App& app);
CommandRun declare_experiment(CLI::App& app);
CommandRun declare_vm(CLI::App& app);

}  // namespace nvj::cli
