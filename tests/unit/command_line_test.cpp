// SPDX-License-Identifier: BSD-3-Clause
// The command lines of nvj and nvj-workload (common/command_line.h): values
// read and checked as nvj writes them, every mistake a usage error naming the
// command, the option and the value; help, version and completion from the
// same declarations; and nvj's own commands declared without a clash.
#include <catch2/catch.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "common/command_completion.h"
#include "common/command_line.h"
#include "tools/nvj/commands.h"
#include "tools/workloads/workload_commands.h"

namespace command_line_test {

using nvj::cli::CommandLine;
using nvj::cli::UsageError;

namespace {

struct Seen {
  std::uint64_t files = 0, size = 0;
  std::uint32_t threads = 1;
  std::string method = "auto";
  bool keep = false;
  std::string operand;
  std::vector<std::string> after;
  int runs = 0;
};

// A program "t" with one command "demo" whose options land in `seen`.
void add_demo(CommandLine& t, Seen& seen) {
  t.add("demo", "a command to test", [&seen](nvj::cli::Command& app) {
    app.describe("Tests the command line.\n");
    app.add("DIR", seen.operand, "a folder");
    app.count("--files", seen.files, 1, 100, "files");
    app.count("--threads", seen.threads, 1u, 64u, "threads");
    app.size("--size", seen.size, 1024, 1ull << 30, "bytes");
    app.choice("--method", seen.method, {"auto", "fuse"}, "how");
    app.flag("--keep", seen.keep, "keep");
    app.take_words_after_dashes(seen.after);
    return [&seen] { return ++seen.runs == 1 ? 0 : 1; };
  });
}

int execute(std::vector<std::string> words, Seen& seen) {
  CommandLine t("t", "A test program.\n", "1.2.3");
  add_demo(t, seen);
  words.insert(words.begin(), "t");
  std::vector<const char*> argv;
  for (const auto& w : words) argv.push_back(w.c_str());
  return t.execute(static_cast<int>(argv.size()), argv.data());
}
}  // namespace

TEST_CASE("options are read with their values and checked", "[command_line]") {
  Seen seen;
  REQUIRE(execute({"demo", "there", "--files", "10", "--threads=3", "--size", "4K", "--method", "fuse", "--keep", "--",
                   "--files", "x"},
                  seen) == 0);
  CHECK(seen.runs == 1);
  CHECK(seen.operand == "there");
  CHECK(seen.files == 10);
  CHECK(seen.threads == 3);
  CHECK(seen.size == 4096);
  CHECK(seen.method == "fuse");
  CHECK(seen.keep);
  // After "--": the command's own words, not options.
  CHECK(seen.after == std::vector<std::string>{"--files", "x"});
}

TEST_CASE("each mistake is a usage error naming the command, the option and the value", "[command_line]") {
  Seen seen;
  CHECK_THROWS_WITH(execute({"demo", "--files", "x"}, seen), "t demo: --files=x: expected a whole number from 1 to 100");
  CHECK_THROWS_WITH(execute({"demo", "--files=0"}, seen), "t demo: --files=0: expected a whole number from 1 to 100");
  CHECK_THROWS_WITH(execute({"demo", "--threads", "65"}, seen),
                    "t demo: --threads=65: expected a whole number from 1 to 64");
  CHECK_THROWS_WITH(execute({"demo", "--size", "1Q"}, seen), Catch::StartsWith("t demo: --size=1Q: "));
  CHECK_THROWS_WITH(execute({"demo", "--size", "512"}, seen),
                    "t demo: --size=512: expected a size from 1 KiB to 1 GiB");
  CHECK_THROWS_WITH(execute({"demo", "--method", "nbd"}, seen), "t demo: --method=nbd: expected auto or fuse");
  CHECK_THROWS_WITH(execute({"demo", "--bogus"}, seen), "t demo: unknown option '--bogus' (t demo --help)");
  CHECK_THROWS_WITH(execute({"demo", "a", "b"}, seen), "t demo: unexpected argument 'b' (t demo --help)");
  CHECK_THROWS_WITH(execute({"demo", "--files"}, seen), Catch::StartsWith("t demo: ") && Catch::Contains("--files"));
  CHECK_THROWS_WITH(execute({"nosuch"}, seen), "t: unknown command 'nosuch' (t --help lists them)");
  CHECK_THROWS_WITH(execute({"nosuch", "--help"}, seen), "t: unknown command 'nosuch' (t --help lists them)");
  CHECK_THROWS_WITH(execute({"help", "nosuch"}, seen), Catch::StartsWith("t help: no command 'nosuch'"));
  CHECK_THROWS_WITH(execute({"completion", "zsh"}, seen), Catch::Contains("completion bash"));
  CHECK(seen.runs == 0);
}

namespace {

// A program "t" with a command "pick" that has commands of its own, and
// the refinements an option can have.
struct Picked {
  std::vector<std::string> names;
  bool json = false, text = false;
  std::uint64_t seed = 0;
  int seeds_given = 0;
  std::string ran;
};

int execute_pick(std::vector<std::string> words, Picked& p) {
  CommandLine t("t", "A test program.\n", "1.2.3");
  t.add("pick", "a command with commands", [&p](nvj::cli::Command& app) {
    app.require_subcommands(1, 1);
    nvj::cli::Command one = app.subcommand("one", "the first");
    nvj::cli::Command two = app.subcommand("two", "the second");
    one.add("--name", p.names, "repeatable").value_name("NAME").one_value_per_use();
    auto json = one.flag("--json", p.json, "JSON");
    one.flag("--text", p.text, "text").excludes(json);
    two.count("--seed", p.seed, 0, 100, "seed").on_given([&p] { ++p.seeds_given; });
    return [&p, one, two] {
      p.ran = one.parsed() ? one.path() : two.parsed() ? two.path() : "neither";
      return 0;
    };
  });
  words.insert(words.begin(), "t");
  std::vector<const char*> argv;
  for (const auto& w : words) argv.push_back(w.c_str());
  return t.execute(static_cast<int>(argv.size()), argv.data());
}

}  // namespace

TEST_CASE("a command's own commands, and what an option's refinements do", "[command_line]") {
  Picked p;
  REQUIRE(execute_pick({"pick", "one", "--name", "a", "--name=b", "--json"}, p) == 0);
  CHECK(p.ran == "t pick one");
  CHECK(p.names == std::vector<std::string>{"a", "b"});
  CHECK(p.json);
  p = Picked{};
  REQUIRE(execute_pick({"pick", "two", "--seed", "7"}, p) == 0);
  CHECK(p.ran == "t pick two");
  CHECK(p.seed == 7);
  CHECK(p.seeds_given == 1);
  p = Picked{};
  REQUIRE(execute_pick({"pick", "two"}, p) == 0);
  CHECK(p.seeds_given == 0);
  p = Picked{};
  // One value per --name: a second word is an operand the command lacks.
  CHECK_THROWS_WITH(execute_pick({"pick", "one", "--name", "a", "b"}, p),
                    "t pick one: unexpected argument 'b' (t pick one --help)");
  CHECK_THROWS_WITH(execute_pick({"pick", "one", "--json", "--text"}, p),
                    Catch::StartsWith("t pick one: ") && Catch::Contains("--json"));
  CHECK_THROWS_WITH(execute_pick({"pick"}, p), "t pick: which one? (t pick --help lists them)");
  CHECK_THROWS_WITH(execute_pick({"pick", "three"}, p), "t pick: unknown command 'three' (t pick --help lists them)");
  CHECK_THROWS_WITH(execute_pick({"pick", "two", "--seed", "101"}, p),
                    "t pick two: --seed=101: expected a whole number from 0 to 100");
  CHECK(p.ran.empty());
}

TEST_CASE("help, version and no command at all", "[command_line]") {
  Seen seen;
  // A command's name after the command is its operand, not a second command.
  REQUIRE(execute({"demo", "help"}, seen) == 0);
  CHECK(seen.operand == "help");
  seen = Seen{};
  CHECK(execute({"--version"}, seen) == 0);
  CHECK(execute({"demo", "--help"}, seen) == 0);
  CHECK(execute({"help", "demo"}, seen) == 0);
  CHECK(execute({}, seen) == 2);  // the program's usage, on stderr
  CHECK(seen.runs == 0);
}

TEST_CASE("the bash completion lists commands, options and what completes their values", "[command_line]") {
  Seen seen;
  CommandLine t("t", "A test program.\n", "1.2.3");
  add_demo(t, seen);
  const std::string script = t.bash_completion();
  CHECK_THAT(script, Catch::Contains("complete -o filenames -F _t t"));
  CHECK_THAT(script, Catch::Contains("opts='--help -h --files --threads --size --method --keep' subs=''"));
  CHECK_THAT(script, Catch::Contains("--method) COMPREPLY=($(compgen -W 'auto fuse' -- \"$cur\")); return 1 ;;"));
  CHECK_THAT(script, Catch::Contains("subs='demo help completion'"));
  CHECK_THAT(script, Catch::Contains("operand=\"-d\""));  // DIR
}

TEST_CASE("nvj's and nvj-workload's commands all declare without a clash", "[command_line]") {
  CommandLine nvj("nvj", "nvjournal.\n", "0");
  nvj::cli::add_commands(nvj);
  nvj::workloads::add_workload_commands(nvj);
  // Declaring every command throws on a name given twice or a bad spec.
  const std::string script = nvj.bash_completion();
  for (const char* path : {"'attach')", "'journal inspect')", "'journal top')", "'experiment morton2001')", "'vm')",
                           "'synctest')", "'writers')"})
    CHECK_THAT(script, Catch::Contains(path));
  CHECK_THAT(script, Catch::Contains("--pattern) COMPREPLY=($(compgen -W 'random sequential'"));
  CHECK_THAT(script, Catch::Contains("--kernel) COMPREPLY=($(compgen -f"));
}

}  // namespace command_line_test
