// SPDX-License-Identifier: BSD-3-Clause
// The bash completion script of a program declared with Command
// (command_line.h): its commands, each command's options and operands, and
// what completes their values, all read from the declarations.
#pragma once

#include <string>

#include "common/command_line.h"

namespace nvj::cli {

// A script that defines _PROGRAM and registers it with `complete -F`.
// `program`: the program's own Command, its commands below it.
std::string make_bash_completion(const std::string& program, const Command& program_command);

}  // namespace nvj::cli
