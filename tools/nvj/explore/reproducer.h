// SPDX-License-Identifier: BSD-3-Clause
// A failing workload's reproducer: a shell script that carries out the
// workload's steps (with python3, byte for byte as the explorer does:
// tools/workloads/explore_steps.cpp) and posts the facts the explorer posted, in the same
// places, through the control socket nvj crash run gives it (NVJ_CONTROL),
// so that `nvj crash run [--mount-options O] -- sh reproduce.sh` records
// and checks it alone, without the explorer.
#pragma once

#include <string>
#include <vector>

#include "crashlab/explore/oracle.h"
#include "crashlab/explore/workload.h"
#include "tools/workloads/explore_steps.h"

namespace nvj::cli {

struct ReproducerStep {
  crashlab::explore::Step step;
  // The fact labels posted before its operation, after it, after its
  // persistence call.
  std::vector<std::string> before, written, after;
};

// `parameters`: the plugin's PARAM=VALUE the exploration was given, for
// nvj crash run's line. `periodic_commit`: the periodic-commit point after
// each core operation's facts (nvj crash explore --periodic-commit;
// workloads::StepOptions).
std::string reproducer_script(const crashlab::explore::Workload& workload, const std::string& bound,
                              const std::string& mount_options, const std::vector<std::string>& parameters,
                              const std::vector<ReproducerStep>& steps, bool periodic_commit = false);

// The same workload in nvj crash explore --vm's guest: nvj-workload
// explore-steps, which the guest has (python3 it has not), run by
// `nvj crash run --vm --kernel KERNEL [--cpus N] -- sh -c "$(cat reproduce-guest.sh)"`
// (--cpus when the guest had more than one processor).
std::string guest_reproducer_script(const crashlab::explore::Workload& workload, const std::string& bound,
                                    const std::string& ops, const std::string& mount_options,
                                    const std::vector<std::string>& parameters,
                                    const crashlab::explore::OracleOptions& oracle,
                                    const workloads::StepOptions& step_options, const std::string& kernel,
                                    unsigned cpus);

}  // namespace nvj::cli
