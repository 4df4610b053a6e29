// SPDX-License-Identifier: BSD-3-Clause
// nvj crash run: the crash lab in one command. A server recording from its
// start (record=), its exports attached to this host and the ext4 it built
// mounted (or, with --vm, a QEMU guest booted on them: nvj vm; or an XFS or
// btrfs made on the attached exports, recorded from just after mkfs, and
// mounted here or in the guest), the
// workload run on it with its facts posted as marks, unmounted and taken
// down, then every crash state checked (check_command.h) and reported.
// nvj crash record is the same without the check.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "tools/nvj/crash/check_command.h"
#include "tools/nvj/vm/guest_kernel.h"

namespace nvj::cli {

struct RunArgs {
  CheckArgs check;                      // its recording is OUT/recording.nvjrec
  std::vector<std::string> parameters;  // the plugin's PARAM=VALUE, over the defaults
  std::string mount_options;            // the workload's mount (and the ground truth's)
  std::vector<std::string> workload;    // after --
  bool keep = false;                    // leave the run folder (server log) behind
  bool vm = false;                      // in a QEMU guest (nvj vm) instead of on this host
  std::string kernel;                   // the guest's kernel as --kernel names it ("": the distribution's)
  std::optional<GuestKernel> resolved_kernel;  // that kernel, resolved already (one of several)
  std::string transport;                // how the guest reaches the exports ("": scsi; VmOptions::transport)
  unsigned cpus = 0;                    // the guest's processors (0: not given, one)
  std::string filesystem = "ext4";      // ext4 (the server's), xfs or btrfs (mkfs on this host)
  std::string log = "external";         // xfs: its log on the journal export, or internal
  bool record_only = false;             // nvj crash record: no check (needs check.out)
};
int crash_run_main(RunArgs args);

}  // namespace nvj::cli
