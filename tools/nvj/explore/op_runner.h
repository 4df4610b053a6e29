// Carries out the explorer's steps (crashlab/explore/workload.h) in a
// mounted filesystem with the system calls they name, and takes the live
// tree the oracle reads. Every failing call throws std::runtime_error
// naming the step and the errno.
#pragma once

#include <filesystem>

#include "crashlab/explore/oracle.h"
#include "crashlab/explore/workload.h"

namespace nvj::cli {

// The step's operation, then its persistence call.
void run_step(const std::filesystem::path& root, const crashlab::explore::Step& step);

// Every name under `root` (lost+found left out), files read whole.
crashlab::explore::LiveTree live_tree(const std::filesystem::path& root);

}  // namespace nvj::cli
