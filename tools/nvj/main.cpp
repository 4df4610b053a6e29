// SPDX-License-Identifier: BSD-3-Clause
// nvj: the nvjournal command. Each command declares its options in its own
// file (commands.h); common/command_line.h parses, helps and completes.
#include "common/command_line.h"
#include "tools/nvj/commands.h"
#include "tools/workloads/workload_commands.h"

int main(int argc, char** argv) {
  nvj::cli::CommandLine nvj("nvj",
                            "nvjournal: a lab for filesystem journals, served over NBD.\n"
                            "`nvj help COMMAND` or `nvj COMMAND --help` describes a command; man nvj has the "
                            "details.\n",
                            NVJ_VERSION);
  nvj::cli::add_commands(nvj);
  nvj::workloads::add_workload_commands(nvj);
  return nvj.run(argc, argv);
}
