// SPDX-License-Identifier: BSD-3-Clause
// Where a check's scratch folder goes when the user names none.
#pragma once

#include <string>

namespace nvj::cli {

// $TMPDIR when set; else /dev/shm when it is a tmpfs this process can
// write with at least 2 GiB free (the states' images and e2fsck's reads
// of them stay in memory, whatever else loads the disk); else /tmp.
std::string default_scratch_parent();

}  // namespace nvj::cli
