// SPDX-License-Identifier: BSD-3-Clause
#include "common/command_line.h"

#include <CLI/CLI.hpp>

#include <charconv>
#include <cstdio>
#include <exception>
#include <sstream>
#include <utility>

#include "common/command_completion.h"
#include "common/duration.h"
#include "common/size.h"

namespace nvj::cli {
namespace {

// "nvj journal top": the App's name after those of the Apps above it.
std::string path_of(const CLI::App& app) {
  std::string path = app.get_name();
  for (const CLI::App* up = app.get_parent(); up != nullptr; up = up->get_parent()) path = up->get_name() + " " + path;
  return path;
}

// Help as nvj has always printed it: the usage line, the command's text,
// then its operands, options and commands with their value names only (the
// defaults are in the descriptions).
class HelpFormatter : public CLI::Formatter {
 public:
  HelpFormatter() {
    column_width(kColumn);
    label("SUBCOMMAND", "COMMAND");
    label("SUBCOMMANDS", "COMMANDS");
    label("Positionals", "Operands");
  }
  std::string make_help(const CLI::App* app, std::string, CLI::AppFormatMode mode) const override {
    if (mode == CLI::AppFormatMode::Sub) return make_expanded(app);
    std::string text = app->get_footer();
    while (!text.empty() && text.back() == '\n') text.pop_back();
    std::string out = make_usage(app, path_of(*app));
    if (!text.empty()) out += "\n" + text + "\n";
    return out + make_positionals(app) + make_groups(app, mode) + make_subcommands(app, mode);
  }
  // Operands show their name only; options their value's name.
  std::string make_option_opts(const CLI::Option* opt) const override {
    return opt->get_type_size() == 0 || opt->get_positional() ? std::string() : " " + opt->get_type_name();
  }
  std::string make_option_desc(const CLI::Option* opt) const override { return wrapped(opt->get_description()); }
  std::string make_subcommand(const CLI::App* sub) const override {
    std::stringstream out;
    CLI::detail::format_help(out, sub->get_name(), wrapped(sub->get_description()), kColumn);
    return out.str();
  }

 private:
  static constexpr std::size_t kColumn = 24;
  // Words filled to 79 columns; format_help indents the lines after the first.
  static std::string wrapped(const std::string& text) {
    std::string out, line;
    std::istringstream words(text);
    for (std::string w; words >> w;) {
      if (!line.empty() && kColumn + line.size() + 1 + w.size() > 79) {
        out += line + "\n";
        line.clear();
      }
      line += (line.empty() ? "" : " ") + w;
    }
    return out + line;
  }
};

std::string join_or(const std::vector<std::string>& words) {
  std::string s;
  for (std::size_t i = 0; i < words.size(); ++i) s += (i == 0 ? "" : i + 1 == words.size() ? " or " : ", ") + words[i];
  return s;
}

// The deepest command the parse selected: `nvj journal inspect`'s inspect.
CLI::App* selected(CLI::App* app) {
  for (;;) {
    const auto subs = app->get_subcommands();
    if (subs.empty()) return app;
    app = subs.front();
  }
}

// Words the parser left over (every command allows them, to name them as
// nvj does): unknown options and operands beyond the command's.
void refuse_leftovers(const CLI::App& command) {
  const std::vector<std::string> rest = command.remaining();
  if (rest.empty()) return;
  const std::string& word = rest.front();
  const std::string path = path_of(command);
  if (word.rfind('-', 0) == 0 && word.size() > 1)
    throw UsageError(path + ": unknown option '" + word + "' (" + path + " --help)");
  throw UsageError(path + ": unexpected argument '" + word + "' (" + path + " --help)");
}

// The commands whose words after "--" are their own (take_words_after_dashes).
std::map<const CLI::App*, std::vector<std::string>*>& tails() {
  static std::map<const CLI::App*, std::vector<std::string>*> m;
  return m;
}

// An option whose value `read` converts and checks, throwing
// std::invalid_argument with the reason; the UsageError names the command,
// the option and the value ("nvj bench: --depth=0: expected ...").
Option add_read(CLI::App& app, const std::string& name, const std::string& value_name, const std::string& help,
                std::function<void(const std::string&)> read) {
  CLI::App* owner = &app;
  return Option(app.add_option_function<std::string>(
                       name,
                       [owner, name, read = std::move(read)](const std::string& text) {
                         try {
                           read(text);
                         } catch (const std::invalid_argument& e) {
                           throw UsageError(path_of(*owner) + ": " + name + "=" + text + ": " + e.what());
                         }
                       },
                       help)
                    ->type_name(value_name));
}

template <class T>
Option add_count_of(CLI::App& app, const std::string& name, T& into, T min, T max, const std::string& help) {
  return add_read(app, name, "N", help, [&into, min, max](const std::string& text) {
    std::uint64_t n = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
    if (ec != std::errc() || end != text.data() + text.size() || n < min || n > max)
      throw std::invalid_argument("expected a whole number from " + std::to_string(min) + " to " +
                                  std::to_string(max));
    into = static_cast<T>(n);
  });
}

}  // namespace

Option Option::value_name(const std::string& name) {
  option_->type_name(name);
  return *this;
}

Option Option::excludes(Option other) {
  option_->excludes(other.option_);
  return *this;
}

Option Option::one_value_per_use() {
  option_->allow_extra_args(false);
  return *this;
}

Option Option::on_given(std::function<void()> seen) {
  option_->each([seen = std::move(seen)](const std::string&) { seen(); });
  return *this;
}

void Command::describe(const std::string& text) { app_->footer(text); }

Option Command::add(const std::string& name, std::string& into, const std::string& help) {
  return Option(app_->add_option(name, into, help));
}

Option Command::add(const std::string& name, std::vector<std::string>& into, const std::string& help) {
  return Option(app_->add_option(name, into, help));
}

Option Command::flag(const std::string& name, bool& into, const std::string& help) {
  return Option(app_->add_flag(name, into, help));
}

Option Command::count(const std::string& name, std::uint64_t& into, std::uint64_t min, std::uint64_t max,
                      const std::string& help) {
  return add_count_of(*app_, name, into, min, max, help);
}

Option Command::count(const std::string& name, std::uint32_t& into, std::uint32_t min, std::uint32_t max,
                      const std::string& help) {
  return add_count_of(*app_, name, into, min, max, help);
}

Option Command::size(const std::string& name, std::uint64_t& into, std::uint64_t min, std::uint64_t max,
                     const std::string& help) {
  return add_read(*app_, name, "SIZE", help, [&into, min, max](const std::string& text) {
    const std::uint64_t n = parse_size(text);  // its invalid_argument says why
    if (n < min || n > max)
      throw std::invalid_argument("expected a size from " + format_size(min) + " to " + format_size(max));
    into = n;
  });
}

Option Command::wall_duration(const std::string& name, std::int64_t& into_ns, const std::string& help) {
  return add_read(*app_, name, "TIME", help, [&into_ns](const std::string& text) { into_ns = parse_wall_duration(text); });
}

Option Command::choice(const std::string& name, std::string& into, const std::vector<std::string>& choices,
                       const std::string& help) {
  std::string names;
  for (const auto& c : choices) names += (names.empty() ? "" : "|") + c;
  return add_read(*app_, name, names, help, [&into, choices](const std::string& text) {
    for (const auto& c : choices)
      if (c == text) {
        into = text;
        return;
      }
    throw std::invalid_argument("expected " + join_or(choices));
  });
}

void Command::take_words_after_dashes(std::vector<std::string>& into) { tails()[app_] = &into; }

Command Command::subcommand(const std::string& name, const std::string& summary) {
  CLI::App* sub = app_->add_subcommand(name, summary);
  sub->allow_extras();  // refused by refuse_leftovers, in nvj's words
  sub->group("Commands");
  return Command(sub);
}

void Command::require_subcommands(std::size_t min, std::size_t max) { app_->require_subcommand(min, max); }

bool Command::parsed() const { return app_->parsed(); }

std::string Command::path() const { return path_of(*app_); }

std::string Command::name() const { return app_->get_name(); }

std::vector<OptionInfo> Command::options() const {
  std::vector<OptionInfo> out;
  for (const CLI::Option* o : app_->get_options()) {
    OptionInfo info;
    info.operand = o->get_lnames().empty() && o->get_snames().empty();
    if (info.operand) info.names.push_back(o->get_name());
    for (const std::string& n : o->get_lnames()) info.names.push_back("--" + n);
    for (const std::string& n : o->get_snames()) info.names.push_back("-" + n);
    if (o->get_type_size() != 0) info.value = o->get_type_name();
    out.push_back(std::move(info));
  }
  return out;
}

std::vector<Command> Command::subcommands() const {
  std::vector<Command> out;
  for (CLI::App* sub : app_->get_subcommands({})) out.emplace_back(sub);
  return out;
}

CommandLine::CommandLine(std::string program, std::string about, std::string version)
    : program_(std::move(program)), app_(std::make_unique<CLI::App>(std::string(), program_)) {
  app_->formatter(std::make_shared<HelpFormatter>());
  // A flag read after the parse, not CLI11's version flag, which throws: a
  // program's first exception costs more than the rest of --version.
  app_->add_flag("--version", version_wanted_, "Print the version and exit");
  version_ = program_ + " " + version;
  app_->footer(std::move(about));
  app_->allow_extras();
  // One command per run: after it, a command's name is an operand
  // (`nvj help journal`, a socket named stats).
  app_->require_subcommand(0, 1);
}

CommandLine::~CommandLine() {
  // Its commands' entries go with them: another line's App may get the address.
  for (const Entry& c : commands_)
    if (c.app != nullptr) tails().erase(c.app);
}

void CommandLine::add(const std::string& name, const std::string& summary, CommandDeclaration declare) {
  commands_.push_back(Entry{name, summary, std::move(declare)});
}

CommandLine::Entry* CommandLine::find(const std::string& name) {
  for (Entry& c : commands_)
    if (c.name == name) return &c;
  return nullptr;
}

CLI::App* CommandLine::listed(Entry& c) {
  if (c.app == nullptr) {
    c.app = app_->add_subcommand(c.name, c.summary);
    c.app->allow_extras()->group("Commands");
    c.app->footer("");  // not the program's text: the declaration describes it
  }
  return c.app;
}

CLI::App* CommandLine::declared(Entry& c) {
  CLI::App* app = listed(c);
  if (!c.declared) {
    c.declared = true;
    Command command(app);
    runs_[app] = c.declare(command);
    for (CLI::App* own : app->get_subcommands({})) own->group("Commands");
  }
  return app;
}

// Every command made, in the order they were added: call it before making
// any one of them, or the listing starts with that one.
void CommandLine::list_all() {
  for (Entry& c : commands_) listed(c);
}

// help and completion, listed after the program's own commands.
void CommandLine::add_builtins() {
  if (builtins_added_) return;
  builtins_added_ = true;
  add("help", "this text, or a command's: help COMMAND", [this](Command& app) -> CommandRun {
    app.add("COMMAND", help_words_, "the command, and its subcommand if it has some");
    app.describe("The list of commands, or the help of one: " + program_ + " help COMMAND [SUBCOMMAND].\n");
    return [this] { return help_command(); };
  });
  add("completion", "print the bash completion script: completion bash", [this](Command& app) -> CommandRun {
    app.add("SHELL", shell_, "bash, the one shell completed");
    app.describe("The bash completion of " + program_ + "'s commands and options: " + program_ +
                      " completion bash > /usr/share/bash-completion/completions/" + program_ + ", or source <(" +
                      program_ + " completion bash).\n");
    return [this] {
      if (shell_ != "bash") throw UsageError(program_ + " completion: which shell? (" + program_ + " completion bash)");
      std::fputs(bash_completion().c_str(), stdout);
      return 0;
    };
  });
}

std::optional<Command> CommandLine::command(const std::string& name) {
  add_builtins();
  Entry* c = find(name);
  if (c == nullptr) return std::nullopt;
  return Command(declared(*c));
}

std::string CommandLine::bash_completion() {
  add_builtins();
  for (Entry& c : commands_) declared(c);
  return make_bash_completion(program_, Command(app_.get()));
}

int CommandLine::help_command() {
  CLI::App* app = app_.get();
  if (help_words_.empty()) list_all();
  for (const std::string& w : help_words_) {
    CLI::App* next = nullptr;
    if (app == app_.get()) {
      if (Entry* c = find(w)) next = declared(*c);
    } else {
      for (CLI::App* s : app->get_subcommands({}))
        if (s->get_name() == w) next = s;
    }
    if (next == nullptr)
      throw UsageError(program_ + " help: no command '" + w + "' in '" + path_of(*app) + "' (" + program_ +
                       " --help lists them)");
    app = next;
  }
  // Its own help, not the help of what was parsed (help itself).
  std::fputs(app->get_formatter()->make_help(app, app->get_name(), CLI::AppFormatMode::Normal).c_str(), stdout);
  return 0;
}

int CommandLine::dispatch(CLI::App* command) {
  refuse_leftovers(*command);
  // A command with commands of its own runs only through one of them.
  for (CLI::App* up = command; up != nullptr; up = up->get_parent()) {
    auto it = runs_.find(up);
    if (it != runs_.end()) return it->second();
  }
  std::fputs(app_->help().c_str(), stderr);
  return 2;
}

int CommandLine::execute(int argc, const char* const* argv) {
  running_ = program_;
  add_builtins();
  // Only the command being run is made and declares its options; the
  // others are made only to be listed (help, completion, an unknown
  // command), never for --version.
  const std::string first = argc > 1 ? argv[1] : "";
  Entry* named = find(first);
  const bool builtin = named != nullptr && (named->name == "help" || named->name == "completion");
  if (named == nullptr ? first != "--version" : builtin) list_all();
  if (named != nullptr) declared(*named);
  int parsed = argc;
  if (named != nullptr) {
    // The command named last (nvj crash run): its own commands, word by word.
    const CLI::App* command = named->app;
    for (int i = 2; i < argc && command != nullptr; ++i) {
      const CLI::App* sub = nullptr;
      for (const CLI::App* c : command->get_subcommands([](const CLI::App*) { return true; }))
        if (c->get_name() == argv[i]) sub = c;
      if (sub == nullptr) break;
      command = sub;
    }
    const auto tail = tails().find(command);
    if (tail != tails().end())
      for (int i = 2; i < argc; ++i)
        if (std::string(argv[i]) == "--") {
          tail->second->assign(argv + i + 1, argv + argc);
          parsed = i;
          break;
        }
  }
  try {
    app_->parse(parsed, argv);
  } catch (const CLI::CallForHelp&) {
    // `nvj bogus --help`: bogus is no command.
    const auto rest = app_->remaining();
    if (selected(app_.get()) == app_.get() && !rest.empty() && rest.front().rfind('-', 0) != 0)
      throw UsageError(program_ + ": unknown command '" + rest.front() + "' (" + program_ + " --help lists them)");
    std::fputs(selected(app_.get())->help().c_str(), stdout);
    return 0;
  } catch (const CLI::RequiredError& e) {
    // A command whose own commands were not named (`nvj journal`, `nvj journal bogus`).
    const CLI::App* command = selected(app_.get());
    const std::string path = path_of(*command);
    if (!command->get_subcommands({}).empty()) {
      const auto rest = command->remaining();
      if (rest.empty() || rest.front().rfind('-', 0) == 0)
        throw UsageError(path + ": which one? (" + path + " --help lists them)");
      throw UsageError(path + ": unknown command '" + rest.front() + "' (" + path + " --help lists them)");
    }
    throw UsageError(path + ": " + e.what() + " (" + path + " --help)");
  } catch (const CLI::ParseError& e) {
    const std::string path = path_of(*selected(app_.get()));
    throw UsageError(path + ": " + e.what() + " (" + path + " --help)");
  }
  if (version_wanted_) {
    std::printf("%s\n", version_.c_str());
    return 0;
  }
  CLI::App* command = selected(app_.get());
  running_ = path_of(*command);
  if (command == app_.get()) {
    const auto rest = app_->remaining();
    if (rest.empty()) {
      std::fputs(app_->help().c_str(), stderr);
      return 2;
    }
    if (rest.front().rfind('-', 0) == 0) refuse_leftovers(*app_);
    throw UsageError(program_ + ": unknown command '" + rest.front() + "' (" + program_ + " --help lists them)");
  }
  return dispatch(command);
}

int CommandLine::run(int argc, const char* const* argv) {
  try {
    return execute(argc, argv);
  } catch (const UsageError& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: %s\n", running_.c_str(), e.what());
    return 1;
  }
}

}  // namespace nvj::cli
