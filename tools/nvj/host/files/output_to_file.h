// SPDX-License-Identifier: BSD-3-Clause
// OutputToFile: this process's stdout and stderr into a file while the
// object lives (a check's report and progress for one workload, or for one
// recovery), put back as they were when it ends.
#pragma once

#include <filesystem>

namespace nvj::cli {

class OutputToFile {
 public:
  explicit OutputToFile(const std::filesystem::path& file);  // throws if it cannot open `file`
  ~OutputToFile();
  OutputToFile(const OutputToFile&) = delete;
  OutputToFile& operator=(const OutputToFile&) = delete;

 private:
  int saved_out_ = -1, saved_err_ = -1;
};

}  // namespace nvj::cli
