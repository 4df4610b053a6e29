// SPDX-License-Identifier: BSD-3-Clause
// nvj crash import and nvj crash export: dm-log-writes logs (the kernel's
// dm-log-writes target, QEMU's blklogwrites, fstests' replay-log) into a
// recording nvj crash check reads, and a recording out to such logs
// (crashlab/record/log_import.h, crashlab/record/log_export.h say how each maps).
#pragma once

#include <cstdint>
#include <string>

namespace nvj::cli {

struct ImportArgs {
  std::string log, journal_log, out;
  std::string base, journal_base;  // the images the logs started from
  std::uint64_t size = 0, journal_size = 0;  // 0: from the log (and the filesystem in it)
  std::string start_mark;                    // empty: "mkfs" when the log has it
  bool no_start_mark = false;
  bool past_count = false;
};

struct ExportArgs {
  std::string recording, format, out, only;
  std::uint32_t sector_size = 512;
  std::string base_mark = "mkfs";
};

int crash_import_main(const ImportArgs& args);
int crash_export_main(const ExportArgs& args);

}  // namespace nvj::cli
