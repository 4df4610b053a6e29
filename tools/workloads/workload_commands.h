// SPDX-License-Identifier: BSD-3-Clause
// The workload generators' command lines, shared by `nvj synctest|writers`
// and the static `nvj-workload` program that runs them inside a VM. Each
// exits 0 on success, 1 when the workload failed (the first error is
// printed), 2 on a usage error.
#pragma once

#include "common/command_line.h"

namespace nvj::workloads {

// synctest, writers and mark.
void add_workload_commands(cli::CommandLine& program);

cli::CommandRun declare_synctest(cli::Command& app);
cli::CommandRun declare_mark(cli::Command& app);
cli::CommandRun declare_writers(cli::Command& app);

}  // namespace nvj::workloads
