// SPDX-License-Identifier: BSD-3-Clause
// The command lines of nvj and nvj-workload: a program of commands, each
// declared once with CLI11, which gives the parser, the help text and the
// bash completion from that one declaration (command_completion.cpp).
//
// Exit statuses, the same for every command: 0 done, 1 the command failed
// or what it checked was found wrong (an exception other than UsageError),
// 2 a usage error (CLI11's parse errors and UsageError). Messages start
// with the command's path: "nvj attach: unknown option '--bogus' ...".
//
// Value names (Option::value_name) say what completes a value: a name with '|' lists
// the choices ("auto|nbd-client|fuse"); FILE, PATH, IMAGE, SOCKET, CONTROL,
// SERVER and KERNEL (a file, a folder, or a name such as debian:sid, typed)
// complete file names, DIR directories; anything else nothing.
// An operand named COMMAND completes with the program's commands (help's).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

// CLI11 is included by command_line.cpp alone: a command declares itself
// through Command and Option below, and a file that includes this header
// does not compile CLI11 again.
namespace CLI {
class App;
class Option;
}  // namespace CLI

namespace nvj::cli {

class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// An option or operand as declared; its refinements chain:
// cmd.option("--out", out, "...").value_name("DIR").
class Option {
 public:
  explicit Option(CLI::Option* option) : option_(option) {}
  // The name of its value in the help and what completes it (see above).
  Option value_name(const std::string& name);
  // Refused together with `other` ("--json" and "--metrics").
  Option excludes(Option other);
  // One value per use of a repeatable option: `--export a --export b`,
  // never `--export a b` (b stays an operand).
  Option one_value_per_use();
  // `seen` runs each time the option is given, after its value is read.
  Option on_given(std::function<void()> seen);

 private:
  CLI::Option* option_;
};

struct OptionInfo;

// A command or subcommand, declared or being declared.
class Command {
 public:
  explicit Command(CLI::App* app) : app_(app) {}

  // Long text, shown under its usage line by --help and help.
  void describe(const std::string& text);
  // An operand ("DIR") or an option ("--out", "-v,--verbose") with a value.
  Option add(const std::string& name, std::string& into, const std::string& help);
  // Repeatable: each value is appended.
  Option add(const std::string& name, std::vector<std::string>& into, const std::string& help);
  Option flag(const std::string& name, bool& into, const std::string& help);
  // Values nvj writes as people do, checked as they are read; a bad value
  // is a UsageError naming the command, the option and the value
  // ("nvj synctest: --passes=0: expected a whole number from 1 to 1000000").
  Option count(const std::string& name, std::uint64_t& into, std::uint64_t min, std::uint64_t max,
               const std::string& help);
  Option count(const std::string& name, std::uint32_t& into, std::uint32_t min, std::uint32_t max,
               const std::string& help);
  // A size with binary suffixes: "250K", "1G", "4096".
  Option size(const std::string& name, std::uint64_t& into, std::uint64_t min, std::uint64_t max,
              const std::string& help);
  // A time limit: seconds, or a number with s, m or h ("90s", "10m"); 0
  // allowed (the caller says what it means).
  Option wall_duration(const std::string& name, std::int64_t& into_ns, const std::string& help);
  // One word of `choices`.
  Option choice(const std::string& name, std::string& into, const std::vector<std::string>& choices,
                const std::string& help);
  // For a command that runs another (nvj vm [OPTION]... -- COMMAND [ARG]...):
  // the words after the first "--" go to `into`, unread by the parser, so
  // that none of them is taken for the command's own option or operand.
  void take_words_after_dashes(std::vector<std::string>& into);

  // A command of its own (nvj journal inspect). It runs through the
  // CommandRun of the command that declares it, which asks parsed().
  Command subcommand(const std::string& name, const std::string& summary);
  // How many of its commands one run names: `journal` needs 1, `experiment`
  // takes 0 or 1.
  void require_subcommands(std::size_t min, std::size_t max);
  // Whether this run named it.
  bool parsed() const;

  // "nvj experiment morton2001": the program and the commands above it.
  std::string path() const;
  std::string name() const;
  // What help and the completion list, and the tests read.
  std::vector<OptionInfo> options() const;
  std::vector<Command> subcommands() const;

 private:
  friend class CommandLine;
  CLI::App* app_;
};

// One option or operand of a command: what `options()` lists.
struct OptionInfo {
  std::vector<std::string> names;  // "--verbose", "-v"; an operand's name: "URI"
  std::string value;               // its value's name ("N", "FILE", "a|b"); empty for a flag
  bool operand = false;
};

// What runs a command once its options are parsed: its exit status.
using CommandRun = std::function<int()>;
// Declares a command's options (and subcommands), bound to state it owns,
// and returns what runs it.
using CommandDeclaration = std::function<CommandRun(Command&)>;

class CommandLine {
 public:
  // `about`: the text under the program's usage line.
  CommandLine(std::string program, std::string about, std::string version);
  ~CommandLine();
  CommandLine(const CommandLine&) = delete;
  CommandLine& operator=(const CommandLine&) = delete;

  // A command: its one-line summary (what `PROGRAM --help` lists) and its
  // declaration, called only when the command is run, helped or completed,
  // so a program starts without building every command's options; the
  // commands are not even made unless they are listed or one is run.
  void add(const std::string& name, const std::string& summary, CommandDeclaration declare);

  // Parses argv and runs the command: the exit status. Also serves
  // --help, --version, `help [COMMAND...]` and `completion bash`. Errors
  // are printed on stderr, prefixed with the command's path.
  int run(int argc, const char* const* argv);
  // The same, with usage errors thrown as UsageError and failures as the
  // command threw them: for the tests. One call per CommandLine.
  int execute(int argc, const char* const* argv);

  // Every command declared: the bash completion script.
  std::string bash_completion();

  // A command, declared: what the tests compare with the manual. None if
  // the program has no such command.
  std::optional<Command> command(const std::string& name);

 private:
  struct Entry {
    std::string name, summary;
    CommandDeclaration declare;  // called once, when the command is first needed
    CLI::App* app = nullptr;     // made when the command is listed or run
    bool declared = false;
  };
  Entry* find(const std::string& name);
  CLI::App* listed(Entry& c);    // its App, made
  CLI::App* declared(Entry& c);  // its App, its options declared
  void list_all();
  void add_builtins();
  int help_command();
  int dispatch(CLI::App* command);

  std::string program_;
  std::unique_ptr<CLI::App> app_;
  std::vector<Entry> commands_;
  std::map<const CLI::App*, CommandRun> runs_;
  std::string running_;  // the path of the command being run, for its errors
  bool builtins_added_ = false;
  std::vector<std::string> help_words_;  // help COMMAND [SUBCOMMAND]
  std::string shell_;                    // completion SHELL
  std::string version_;                  // "nvj 0.1.0"
  bool version_wanted_ = false;
};

}  // namespace nvj::cli
