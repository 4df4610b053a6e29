// The bash completion script of a program declared with CLI11
// (command_line.h): its commands, each command's options and operands, and
// what completes their values, all read from the declarations.
#pragma once

#include <CLI/CLI.hpp>

#include <string>

namespace nvj::cli {

// A script that defines _PROGRAM and registers it with `complete -F`.
std::string make_bash_completion(const std::string& program, const CLI::App& app);

}  // namespace nvj::cli
