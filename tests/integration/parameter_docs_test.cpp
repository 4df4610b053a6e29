// SPDX-License-Identifier: BSD-3-Clause
// What the plugin's parser accepts, what `nbdkit nvjournal --help` lists and
// what its manual lists must be the same keys; and nvj's commands, its
// --help and its manual likewise. Each is read on its own: the parser's
// answer from a real nbdkit (an unknown key is refused as unknown; a known
// one with a bad value is refused for its value), the help from the running
// programs, the manual from docs/*.pod. The keys tried are every one the
// help or the manual names, every lowercase word quoted in the parser's
// source (so a key the parser takes that nobody documented is found) and a
// few near misses.
#include <catch2/catch.hpp>

#include <chrono>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "common/command_line.h"
#include "server_fixture.h"
#include "tools/nvj/commands.h"
#include "tools/nvj/host/files/text_file.h"
#include "tools/nvj/host/files/text_pattern.h"
#include "tools/nvj/host/processes/process.h"
#include "tools/nvj/host/processes/server_process.h"
#include "tools/workloads/workload_commands.h"

namespace parameter_docs_test {

using nvj::test::TempDir;

namespace {

using Words = std::set<std::string>;

std::string source_file(const std::string& relative) {
  return nvj::cli::read_text_file(std::string(NVJ_SOURCE_DIR) + "/" + relative);
}

std::string joined(const Words& words) {
  std::string out;
  for (const std::string& w : words) out += (out.empty() ? "" : " ") + w;
  return out;
}

// `pattern`'s first group in every match in `text`, line by line (a
// SYNOPSIS line names several keys).
Words matches(const std::string& text, const std::string& pattern) {
  const nvj::cli::TextPattern compiled(pattern);
  Words out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    for (const auto& m : compiled.search_all(line)) out.insert(m.groups[1]);
  return out;
}

// The lowercase words a source file has in quotes ("data-file", "on", ...).
Words quoted_words(const std::string& source) {
  Words out;
  static const nvj::cli::TextPattern word(R"re("([a-z][a-z0-9]*(-[a-z0-9]+)*)")re");
  for (const auto& m : word.search_all(source)) out.insert(m.groups[1]);
  return out;
}

// The part of a POD manual from `=head1 NAME` to the next =head1.
std::string pod_section(const std::string& pod, const std::string& name) {
  const std::string head = "=head1 " + name + "\n";
  const std::size_t start = pod.find(head);
  if (start == std::string::npos) return "";
  const std::size_t end = pod.find("\n=head1 ", start + head.size());
  return pod.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

// What nbdkit's --help prints for the plugin: the lines after its
// "plugin: nvjournal" line.
std::string plugin_help() {
  const auto help =
      nvj::cli::run({"nbdkit", nvj::cli::ServerProcess::default_plugin(), "--help"}, nvj::test::server_env());
  REQUIRE(help.status == 0);
  const std::size_t at = help.output.find("\nplugin: nvjournal");
  REQUIRE(at != std::string::npos);
  return help.output.substr(at);
}

enum class KeyVerdict { accepted, unknown };

// Whether the plugin's parser knows `key`: given twice with an empty value,
// nbdkit stops at the configuration either way, and says why.
KeyVerdict plugin_takes(const std::string& key) {
  const TempDir sock;
  const std::string param = key + "=";
  const auto r = nvj::cli::run({"nbdkit", "-U", sock.file("nbdkit.sock"), "--run", "true",
                                nvj::cli::ServerProcess::default_plugin(), param, param},
                               nvj::test::server_env(), std::chrono::seconds(30));
  INFO("nbdkit said: " << r.output);
  CHECK(r.status != 0);
  CHECK_THAT(r.output, Catch::Contains("error: " + param + ":"));
  return r.output.find("unknown parameter '" + key + "'") != std::string::npos ? KeyVerdict::unknown
                                                                               : KeyVerdict::accepted;
}

enum class CommandVerdict { command, unknown, other };

// Whether nvj has a command `word`: its --help is that command's usage.
CommandVerdict nvj_takes(const std::string& word) {
  const auto r = nvj::cli::run({NVJ_BINARY, word, "--help"}, {}, std::chrono::seconds(30));
  if (r.output.find("unknown command '" + word + "'") != std::string::npos) return CommandVerdict::unknown;
  if (r.status == 0 && (r.output.starts_with("Usage: nvj " + word + " ") ||
                        r.output.starts_with("Usage: nvj " + word + "\n")))
    return CommandVerdict::command;
  return CommandVerdict::other;  // "help": nvj's own usage
}

}  // namespace

TEST_CASE("the keys the plugin accepts are the ones its --help and its manual list", "[parameters]") {
  // The manual lists each key twice: in its SYNOPSIS and under PARAMETERS.
  const Words help = matches(plugin_help(), R"(^([a-z][a-z0-9-]*)=)");
  const std::string pod = source_file("docs/nbdkit-nvjournal-plugin.pod");
  // "=item [B<data=>]I<SIZE>", "=item B<stats=on>|B<off>"
  const Words manual = matches(pod_section(pod, "PARAMETERS"), R"(^=item \[?B<([a-z][a-z0-9-]*)=)");
  // " nbdkit nvjournal [[data=]SIZE] [journal=SIZE]" and the lines after it
  const Words synopsis = matches(pod_section(pod, "SYNOPSIS"), R"(\[\[?([a-z][a-z0-9-]*)=)");
  INFO("--help lists: " << joined(help));
  INFO("the manual lists: " << joined(manual));
  REQUIRE(help.size() >= 10);
  REQUIRE(manual.size() >= 10);
  REQUIRE(synopsis.size() >= 5);

  // The parser refuses a key it does not know, however close to one it knows.
  for (const char* near_miss : {"size", "datafile", "data-files", "fs-size", "journal-models", "Data"}) {
    CAPTURE(near_miss);
    CHECK(plugin_takes(near_miss) == KeyVerdict::unknown);
  }

  Words candidates = quoted_words(source_file("server/lab/config.cpp"));
  candidates.insert(help.begin(), help.end());
  candidates.insert(manual.begin(), manual.end());
  candidates.insert(synopsis.begin(), synopsis.end());
  Words accepted;
  for (const std::string& key : candidates)
    if (plugin_takes(key) == KeyVerdict::accepted) accepted.insert(key);
  INFO("the parser accepts: " << joined(accepted));
  REQUIRE(accepted.size() >= 10);

  for (const std::string& key : accepted) {
    CAPTURE(key);
    CHECK(help.contains(key));
    CHECK(manual.contains(key));
    CHECK(synopsis.contains(key));
  }
  for (const std::string& key : help) {
    CAPTURE(key);
    CHECK(accepted.contains(key));
  }
  for (const std::string& key : manual) {
    CAPTURE(key);
    CHECK(accepted.contains(key));
  }
  for (const std::string& key : synopsis) {
    CAPTURE(key);
    CHECK(accepted.contains(key));
  }
}

TEST_CASE("the commands nvj runs are the ones its --help and its manual list", "[parameters]") {
  const auto usage = nvj::cli::run({NVJ_BINARY, "--help"}, {}, std::chrono::seconds(30));
  REQUIRE(usage.status == 0);
  const std::size_t at = usage.output.find("\nCommands:\n");
  REQUIRE(at != std::string::npos);
  const std::string listing = usage.output.substr(at, usage.output.find("\n\n", at + 1) - at);
  const Words help = matches(listing, R"(^  ([a-z][a-z0-9-]*)( |$))");
  const Words manual = matches(pod_section(source_file("docs/nvj.pod"), "COMMANDS"),
                               R"(^=head2 nvj ([a-z][a-z0-9-]*)$)");
  INFO("nvj --help lists: " << joined(help));
  INFO("the manual lists: " << joined(manual));
  REQUIRE(help.size() >= 8);
  REQUIRE(manual.size() >= 8);
  CHECK(nvj_takes("bogus") == CommandVerdict::unknown);
  CHECK(nvj_takes("demos") == CommandVerdict::unknown);

  Words candidates = quoted_words(source_file("tools/nvj/commands/command_list.cpp"));
  candidates.insert(help.begin(), help.end());
  candidates.insert(manual.begin(), manual.end());
  Words commands;
  for (const std::string& word : candidates)
    if (nvj_takes(word) == CommandVerdict::command) commands.insert(word);
  INFO("nvj runs: " << joined(commands));
  REQUIRE(commands.size() >= 8);

  for (const std::string& c : commands) {
    CAPTURE(c);
    CHECK(help.contains(c));
    CHECK(manual.contains(c));
  }
  for (const std::string& c : help) {
    CAPTURE(c);
    CHECK(commands.contains(c));
  }
  for (const std::string& c : manual) {
    CAPTURE(c);
    CHECK(commands.contains(c));
  }
}

namespace {

// The part of nvj.pod about `nvj COMMAND`: from its =head2 to the next head.
std::string command_section(const std::string& pod, const std::string& command) {
  const std::string head = "=head2 nvj " + command + "\n";
  const std::size_t start = pod.find(head);
  if (start == std::string::npos) return "";
  const std::size_t end = pod.find("\n=head", start + head.size());
  return pod.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

// Every option a command declares, with those of its own commands.
void declared_options(const nvj::cli::Command& command, Words& into) {
  for (const auto& o : command.options())
    if (!o.operand)
      for (const std::string& name : o.names)
        if (name != "--help" && name != "-h") into.insert(name);
  for (const nvj::cli::Command& sub : command.subcommands()) declared_options(sub, into);
}

}  // namespace

TEST_CASE("each nvj command's options are the ones its section of the manual names", "[parameters]") {
  nvj::cli::CommandLine nvj("nvj", "", "0");
  nvj::cli::add_commands(nvj);
  nvj::workloads::add_workload_commands(nvj);
  const std::string pod = source_file("docs/nvj.pod");
  const Words commands = matches(pod_section(pod, "COMMANDS"), R"(^=head2 nvj ([a-z][a-z0-9-]*)$)");
  REQUIRE(commands.size() >= 10);
  for (const std::string& c : commands) {
    CAPTURE(c);
    if (c == "help" || c == "completion") continue;
    const std::optional<nvj::cli::Command> command = nvj.command(c);
    REQUIRE(command.has_value());
    Words declared;
    declared_options(*command, declared);
    // What the manual names in bold: --long options and -v.
    const Words manual = matches(command_section(pod, c), R"(B<(--?[a-z][a-z0-9-]*)>)");
    INFO("declared: " << joined(declared));
    INFO("the manual names: " << joined(manual));
    for (const std::string& o : declared) {
      CAPTURE(o);
      CHECK(manual.contains(o));
    }
    for (const std::string& o : manual) {
      CAPTURE(o);
      // --then separates the guest's two commands, after --: not nvj's option.
      CHECK((declared.contains(o) || (c == "vm" && o == "--then")));
    }
  }
}

TEST_CASE("nvj --help's line for crash lists every subcommand of nvj crash, and nothing else", "[parameters]") {
  nvj::cli::CommandLine nvj("nvj", "", "0");
  nvj::cli::add_commands(nvj);
  const auto usage = nvj::cli::run({NVJ_BINARY, "--help"}, {}, std::chrono::seconds(30));
  REQUIRE(usage.status == 0);
  std::string listing = usage.output.substr(usage.output.find("\nCommands:\n"));
  for (char& c : listing)
    if (c == '\n') c = ' ';
  const std::size_t at = listing.find("  crash ");
  REQUIRE(at != std::string::npos);
  const std::size_t open = listing.find('(', at), close = listing.find(')', at);
  REQUIRE(open < close);
  std::string named = listing.substr(open + 1, close - open - 1);
  std::erase(named, ',');
  Words listed;
  std::istringstream words(named);
  for (std::string w; words >> w;) listed.insert(w);
  const std::optional<nvj::cli::Command> crash = nvj.command("crash");
  REQUIRE(crash.has_value());
  Words declared;
  for (const nvj::cli::Command& sub : crash->subcommands()) declared.insert(sub.name());
  INFO("nvj --help lists: " << joined(listed) << "; nvj crash has: " << joined(declared));
  REQUIRE(declared.size() >= 11);
  CHECK(listed == declared);
}

}  // namespace parameter_docs_test
