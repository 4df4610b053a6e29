// The command lines of nvj and nvj-workload: a program of commands, each
// declared once with CLI11, which gives the parser, the help text and the
// bash completion from that one declaration (command_completion.cpp).
//
// Exit statuses, the same for every command: 0 done, 1 the command failed
// or what it checked was found wrong (an exception other than UsageError),
// 2 a usage error (CLI11's parse errors and UsageError). Messages start
// with the command's path: "nvj attach: unknown option '--bogus' ...".
//
// Value names (type_name) say what completes a value: a name with '|' lists
// the choices ("auto|nbd-client|fuse"); FILE, PATH, IMAGE, SOCKET, CONTROL
// and SERVER complete file names, DIR directories; anything else nothing.
// An operand named COMMAND completes with the program's commands (help's).
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace nvj::cli {

class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// What runs a command once its options are parsed: its exit status.
using CommandRun = std::function<int()>;
// Declares a command's options (and subcommands) on its App, bound to state
// it owns, and returns what runs it.
using CommandDeclaration = std::function<CommandRun(CLI::App&)>;

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

  // A command, declared: what the tests compare with the manual. Null if
  // the program has no such command.
  const CLI::App* command(const std::string& name);

 private:
  struct Command {
    std::string name, summary;
    CommandDeclaration declare;  // called once, when the command is first needed
    CLI::App* app = nullptr;     // made when the command is listed or run
    bool declared = false;
  };
  Command* find(const std::string& name);
  CLI::App* listed(Command& c);    // its App, made
  CLI::App* declared(Command& c);  // its App, its options declared
  void list_all();
  void add_builtins();
  int help_command();
  int dispatch(CLI::App* command);

  std::string program_;
  CLI::App app_;
  std::vector<Command> commands_;
  std::map<const CLI::App*, CommandRun> runs_;
  std::string running_;  // the path of the command being run, for its errors
  bool builtins_added_ = false;
  std::vector<std::string> help_words_;  // help COMMAND [SUBCOMMAND]
  std::string shell_;                    // completion SHELL
  std::string version_;                  // "nvj 0.1.0"
  bool version_wanted_ = false;
};

// "nvj experiment morton2001": the program and the commands above `app`.
std::string command_path(const CLI::App& app);

// Long text of a command, shown under its usage line by --help and help.
void describe(CLI::App& app, const std::string& text);

// Options whose values nvj writes as people do, checked as they are read;
// a bad value is a UsageError naming the command, the option and the value
// ("nvj synctest: --passes=0: expected a whole number from 1 to 1000000").
CLI::Option* add_count(CLI::App& app, const std::string& name, std::uint64_t& into, std::uint64_t min,
                       std::uint64_t max, const std::string& help);
CLI::Option* add_count(CLI::App& app, const std::string& name, std::uint32_t& into, std::uint32_t min,
                       std::uint32_t max, const std::string& help);
// A size with binary suffixes: "250K", "1G", "4096".
CLI::Option* add_size(CLI::App& app, const std::string& name, std::uint64_t& into, std::uint64_t min,
                      std::uint64_t max, const std::string& help);
// One word of `choices`.
CLI::Option* add_choice(CLI::App& app, const std::string& name, std::string& into,
                        const std::vector<std::string>& choices, const std::string& help);

// For a command that runs another (nvj vm [OPTION]... -- COMMAND [ARG]...):
// the words after the first "--" go to `into`, unread by the parser, so that
// none of them is taken for the command's own option or operand.
void take_words_after_dashes(CLI::App& app, std::vector<std::string>& into);

// The options of a command that is not running: what `help` and the
// completion list. Exposed for the tests.
struct OptionInfo {
  std::vector<std::string> names;  // "--verbose", "-v"; an operand's name: "URI"
  std::string value;               // its value's name ("N", "FILE", "a|b"); empty for a flag
  bool operand = false;
};
std::vector<OptionInfo> options_of(const CLI::App& app);

}  // namespace nvj::cli
