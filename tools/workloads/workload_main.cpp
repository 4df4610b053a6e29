// SPDX-License-Identifier: BSD-3-Clause
// nvj-workload: the workload generators alone, linked statically so that
// `nvj vm` can put them in a guest's initramfs. The same commands and
// options as `nvj synctest` and `nvj writers`.
#include "common/command_line.h"
#include "tools/workloads/explore_guest_commands.h"
#include "tools/workloads/workload_commands.h"

int main(int argc, char** argv) {
  nvj::cli::CommandLine program("nvj-workload", "The workload generators of nvj, for a guest.\n", NVJ_VERSION);
  nvj::workloads::add_workload_commands(program);
  nvj::workloads::add_guest_explore_commands(program);
  return program.run(argc, argv);
}
