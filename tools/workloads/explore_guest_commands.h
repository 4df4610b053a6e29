// SPDX-License-Identifier: BSD-3-Clause
// The commands nvj crash explore --vm runs inside its guest, through
// nvj-workload: explore-steps carries out one generated workload in the
// current directory with its oracle's facts posted as marks
// (explore_steps.h), and explore-lab asks the host, over the serial line,
// to restore the server's base and start a recording before a workload
// and to stop it after (common/mark_client.h, serial_lab_request).
#pragma once

#include "common/command_line.h"

namespace nvj::workloads {

void add_guest_explore_commands(cli::CommandLine& program);

}  // namespace nvj::workloads
