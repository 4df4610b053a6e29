// The workload generators' command lines, shared by `nvj synctest|writers`
// and the static `nvj-workload` program that runs them inside a VM.
// Each returns the exit status: 0 success, 1 the workload failed (the first
// error is printed), 2 usage (thrown as cli::UsageError).
#pragma once

#include <string>
#include <vector>

namespace nvj::workloads {

int synctest_command(const std::vector<std::string>& args);
int writers_command(const std::vector<std::string>& args);

}  // namespace nvj::workloads
