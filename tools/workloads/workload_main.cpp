// nvj-workload: the workload generators alone, linked statically so that
// `nvj vm` can put them in a guest's initramfs. Same options as `nvj
// synctest` and `nvj writers`.
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "common/args.h"
#include "tools/workloads/workload_commands.h"

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty() || args[0] == "--help" || args[0] == "-h") {
    std::fputs("Usage: nvj-workload synctest|writers DIR [OPTION]...  (COMMAND --help for the options)\n",
               args.empty() ? stderr : stdout);
    return args.empty() ? 2 : 0;
  }
  const std::string command = args[0];
  args.erase(args.begin());
  try {
    if (command == "synctest") return nvj::workloads::synctest_command(args);
    if (command == "writers") return nvj::workloads::writers_command(args);
    std::fprintf(stderr, "nvj-workload: unknown command '%s' (synctest or writers)\n", command.c_str());
    return 2;
  } catch (const nvj::cli::UsageError& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "nvj-workload %s: %s\n", command.c_str(), e.what());
    return 1;
  }
}
