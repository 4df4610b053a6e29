// SPDX-License-Identifier: BSD-3-Clause
// nvj crash: the crash lab's commands. Each subcommand is declared beside
// what it runs (tools/nvj/crash/subcommands.h); this file lists them, in
// the order `nvj crash --help` shows them, and runs the one named.
#include <vector>

#include "tools/nvj/commands.h"
#include "tools/nvj/crash/subcommands.h"

namespace nvj::cli {
namespace {

constexpr const char* kCrashText = R"(The crash lab: which states of a recorded run a power cut could leave, and
whether the filesystem on them keeps what the workload made durable.
)";

}  // namespace

CommandRun declare_crash(Command& app) {
  app.describe(kCrashText);
  app.require_subcommands(1, 1);
  const std::vector<CrashSubcommand> subcommands{
      declare_crash_states(app),  declare_crash_check(app),   declare_crash_run(app),
      declare_crash_record(app),  declare_crash_report(app),  declare_crash_image(app),
      declare_crash_frames(app),  declare_crash_explore(app), declare_crash_import(app),
      declare_crash_export(app),  declare_crash_merge(app)};
  return [subcommands] {
    for (const CrashSubcommand& s : subcommands)
      if (s.command.parsed()) return s.run();
    throw UsageError("nvj crash: which subcommand?");
  };
}

}  // namespace nvj::cli
