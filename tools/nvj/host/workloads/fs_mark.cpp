// SPDX-License-Identifier: BSD-3-Clause
#include "tools/nvj/host/workloads/fs_mark.h"

#include <stdexcept>

#include "tools/nvj/host/files/text_pattern.h"
#include "tools/nvj/host/processes/process.h"

namespace nvj::cli {

FsMarkResult parse_fs_mark(const std::string& output) {
  const TextPattern row(R"(^\s*\d+\s+(\d+)\s+\d+\s+([0-9.]+)\s+\d+\s*$)", true);
  const std::vector<TextMatch> rows = row.search_all(output);
  if (rows.empty()) throw std::runtime_error("no result in fs_mark's output: " + output);
  FsMarkResult last;
  last.files = std::stoull(rows.back().groups[1]);
  last.files_per_second = std::stod(rows.back().groups[2]);
  return last;
}

FsMarkResult run_fs_mark(const FsMarkOptions& o) {
  const auto parent = o.directory.parent_path();
  const auto name = o.directory.filename().string();
  std::vector<std::string> argv{"sh", "-c", "cd \"$0\" && exec \"$@\"", parent.string(), "fs_mark", "-d", name,
                                "-s", std::to_string(o.file_size), "-n", std::to_string(o.files_per_thread),
                                "-t", std::to_string(o.threads), "-S", std::to_string(o.sync_method), "-k"};
  if (!o.log.empty()) argv.insert(argv.end(), {"-l", o.log.string()});
  const auto r = run(argv);
  if (r.status != 0) throw std::runtime_error("fs_mark failed (status " + std::to_string(r.status) + "): " + r.output);
  return parse_fs_mark(r.output);
}

}  // namespace nvj::cli
