// SPDX-License-Identifier: BSD-3-Clause
// The `nvj crash` subcommands, each declared beside what it runs (its
// options, its help text, the checks of its operands): declare_crash_NAME
// adds NAME to `crash` and returns it with what runs it once it is the one
// parsed. tools/nvj/commands/crash_command.cpp lists them, in the order
// `nvj crash --help` shows them.
#pragma once

#include "common/command_line.h"

namespace nvj::cli {

struct CrashSubcommand {
  Command command;  // as declared: parsed() says whether this run named it
  CommandRun run;
};

CrashSubcommand declare_crash_states(Command& crash);   // states_command.cpp
CrashSubcommand declare_crash_check(Command& crash);    // check_command.cpp
CrashSubcommand declare_crash_run(Command& crash);      // run_command.cpp
CrashSubcommand declare_crash_record(Command& crash);   // run_command.cpp
CrashSubcommand declare_crash_report(Command& crash);   // crash_report.cpp
CrashSubcommand declare_crash_image(Command& crash);    // check_command.cpp
CrashSubcommand declare_crash_frames(Command& crash);   // frames_command.cpp
CrashSubcommand declare_crash_explore(Command& crash);  // tools/nvj/explore/explore_command.cpp
CrashSubcommand declare_crash_import(Command& crash);   // log_command.cpp
CrashSubcommand declare_crash_export(Command& crash);   // log_command.cpp
CrashSubcommand declare_crash_merge(Command& crash);    // merge_command.cpp

}  // namespace nvj::cli
