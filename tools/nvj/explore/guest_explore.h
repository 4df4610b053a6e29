// SPDX-License-Identifier: BSD-3-Clause
// nvj crash explore --vm: the workloads of one exploration run in a guest,
// one boot for all of them. The host starts the server (the filesystem on
// it), keeps its base (POST /base/keep) and boots the kernel given; the
// guest unmounts what /init mounted and, for each workload, asks the host
// over its serial line to restore the base and start a recording
// ("nvj-lab begin N": POST /base/restore, /record/start), drops its block
// caches, mounts, runs the workload with its oracle's facts posted as
// marks (nvj-workload explore-steps), unmounts and hands the host its
// trace ("nvj-lab end N": /record/stop). The recordings are checked on the
// host afterwards (check_workload), as the host's own runs are.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "tools/nvj/explore/explore_command.h"
#include "tools/nvj/vm/guest_kernel.h"
#include "tools/workloads/explore_steps.h"

namespace nvj::cli {

struct GuestExploreOptions {
  const ExploreArgs* args = nullptr;
  std::vector<std::string> parameters;  // the plugin's, the layout's defaults under the user's
  GuestKernel kernel;                   // the guest's
  std::vector<std::uint64_t> workloads; // the ordinals, in order
  std::filesystem::path out;            // OUT/workloads/N/recording.nvjrec each
  std::filesystem::path run_dir;        // the control socket goes here
};

struct GuestExplore {
  std::map<std::uint64_t, workloads::ExploreTrace> traces;  // of the workloads that ended
  int status = 0;         // the guest's command's (1: it stopped early)
  double seconds = 0;     // the guest's whole run, boot included
};

GuestExplore explore_in_guest(const GuestExploreOptions& options);

// The guest's command: the loop above as a busybox shell script.
std::string guest_explore_script(const ExploreArgs& args, const crashlab::explore::OracleOptions& oracle,
                                 const std::vector<std::uint64_t>& workloads);

}  // namespace nvj::cli
