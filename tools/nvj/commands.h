// The nvj subcommands. Each returns the process exit status: 0 on success, 1
// on failure, 2 on a usage error (thrown as UsageError).
#pragma once

#include <string>
#include <vector>

namespace nvj::cli {

int attach_command(const std::vector<std::string>& args);
int detach_command(const std::vector<std::string>& args);
int demo_command(const std::vector<std::string>& args);
int stats_command(const std::vector<std::string>& args);
int bench_command(const std::vector<std::string>& args);
int mkfs_command(const std::vector<std::string>& args);
int journal_command(const std::vector<std::string>& args);
int experiment_command(const std::vector<std::string>& args);
int vm_command(const std::vector<std::string>& args);

}  // namespace nvj::cli
