// nvj crash run: the crash lab in one command on this host. A server
// recording from its start (record=), its exports attached and the ext4 it
// built mounted, the workload run on it with its facts posted as marks,
// unmounted and taken down, then every crash state checked
// (check_command.h) and reported.
#pragma once

#include <string>
#include <vector>

#include "tools/nvj/crash/check_command.h"

namespace nvj::cli {

struct RunArgs {
  CheckArgs check;                      // its recording is OUT/recording.nvjrec
  std::vector<std::string> parameters;  // the plugin's PARAM=VALUE, over the defaults
  std::string mount_options;            // the workload's mount (and the ground truth's)
  std::vector<std::string> workload;    // after --
  bool keep = false;                    // leave the run folder (server log) behind
};
int crash_run_main(RunArgs args);

}  // namespace nvj::cli
