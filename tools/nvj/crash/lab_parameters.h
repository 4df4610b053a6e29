// SPDX-License-Identifier: BSD-3-Clause
// The plugin's parameters for the crash lab's own servers (nvj crash run,
// record, explore): its default layout per filesystem, and the user's
// PARAM=VALUE over it.
#pragma once

#include <string>
#include <vector>

namespace nvj::cli {

// The default layout: ext4 with its journal on an NVRAM device, its data
// on a disk with a volatile write cache (what loses data if anything does).
// XFS the same with its log on the NVRAM device (mkfs.xfs wants 300 MiB of
// data and 64 MiB of log at least), btrfs on the disk alone; both on blank
// exports (fs=none) for mkfs.
std::vector<std::string> default_parameters(const std::string& filesystem);

// The defaults (and the caller's own `more` defaults, each over the
// default of its key), each replaced by a parameter of the same key given, or dropped by one given empty
// (journal=); journal= goes by itself where ext4's journal is inside the
// data export (fs-journal=internal or none). A UsageError, naming
// `command`, for a word that is no PARAM=VALUE (`hint` follows the
// message), record= or control= (the command's own), and an fs= other than
// none for XFS or btrfs.
std::vector<std::string> parameters_over_defaults(const std::string& filesystem, const std::vector<std::string>& given,
                                                  const std::string& command, const std::string& hint = "",
                                                  const std::vector<std::string>& more = {});

}  // namespace nvj::cli
