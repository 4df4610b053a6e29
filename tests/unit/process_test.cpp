// SPDX-License-Identifier: BSD-3-Clause
// Child processes: the environment a caller sets reaches the child in place
// of ours, each name once, seen through real programs (printenv asks glibc's
// getenv, which takes the first of two entries; env prints every entry).
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "tools/nvj/host/files/text_file.h"
#include "tools/nvj/host/processes/process.h"

namespace process_test {

using nvj::cli::run;

namespace {

// Sets a variable of ours for the length of a test.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    ::setenv(name, value, 1);
  }
  ~ScopedEnv() {
    if (old_.empty()) {
      ::unsetenv(name_);
    } else {
      ::setenv(name_, old_.c_str(), 1);
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::string old_;
};

// The lines of `env`'s output that set `name`.
std::vector<std::string> entries_of(const std::string& env_output, const std::string& name) {
  std::vector<std::string> out;
  std::istringstream in(env_output);
  for (std::string line; std::getline(in, line);)
    if (line.starts_with(name + "=")) out.push_back(line);
  return out;
}

}  // namespace

TEST_CASE("the caller's variable replaces the one the child would inherit", "[process]") {
  const ScopedEnv inherited("NVJ_TEST_VARIABLE", "inherited");
  const ScopedEnv kept("NVJ_TEST_KEPT", "kept");

  const auto plain = run({"printenv", "NVJ_TEST_VARIABLE"});
  CHECK(plain.status == 0);
  CHECK(plain.output == "inherited\n");

  const std::vector<std::string> env{"NVJ_TEST_VARIABLE=caller"};
  const auto seen = run({"printenv", "NVJ_TEST_VARIABLE"}, env);
  CHECK(seen.status == 0);
  CHECK(seen.output == "caller\n");
  const auto all = run({"env"}, env);
  REQUIRE(all.status == 0);
  CHECK(entries_of(all.output, "NVJ_TEST_VARIABLE") == std::vector<std::string>{"NVJ_TEST_VARIABLE=caller"});
  // What the caller does not name is inherited as it is.
  CHECK(entries_of(all.output, "NVJ_TEST_KEPT") == std::vector<std::string>{"NVJ_TEST_KEPT=kept"});
  // A shell reads the same value.
  CHECK(run({"sh", "-c", "echo \"$NVJ_TEST_VARIABLE\""}, env).output == "caller\n");
}

TEST_CASE("a variable the caller sets twice takes the last value, once", "[process]") {
  const ScopedEnv inherited("NVJ_TEST_VARIABLE", "inherited");
  const std::vector<std::string> env{"NVJ_TEST_VARIABLE=first", "NVJ_TEST_OTHER=other", "NVJ_TEST_VARIABLE=last"};
  CHECK(run({"printenv", "NVJ_TEST_VARIABLE"}, env).output == "last\n");
  const auto all = run({"env"}, env);
  REQUIRE(all.status == 0);
  CHECK(entries_of(all.output, "NVJ_TEST_VARIABLE") == std::vector<std::string>{"NVJ_TEST_VARIABLE=last"});
  CHECK(entries_of(all.output, "NVJ_TEST_OTHER") == std::vector<std::string>{"NVJ_TEST_OTHER=other"});
  // An empty value sets the variable to "", it does not remove it; a name
  // that only begins like another one is another variable.
  const auto empty = run({"env"}, {"NVJ_TEST_VARIABLE=", "NVJ_TEST_VARIABLE_2=x"});
  CHECK(entries_of(empty.output, "NVJ_TEST_VARIABLE") == std::vector<std::string>{"NVJ_TEST_VARIABLE="});
  CHECK(entries_of(empty.output, "NVJ_TEST_VARIABLE_2") == std::vector<std::string>{"NVJ_TEST_VARIABLE_2=x"});
}

TEST_CASE("a process started in the background gets the caller's environment too", "[process]") {
  // As a test's sanitizer options for a server it starts.
  const ScopedEnv inherited("ASAN_OPTIONS", "detect_leaks=1");
  char templ[] = "/tmp/nvj-process-test-XXXXXX";
  REQUIRE(::mkdtemp(templ) != nullptr);
  const std::filesystem::path dir = templ;
  const std::string log = (dir / "output").string();
  const pid_t pid =
      nvj::cli::spawn({"env"}, nvj::cli::SpawnOptions{log, true, {"ASAN_OPTIONS=detect_leaks=0:abort_on_error=1"}, {}});
  CHECK(nvj::cli::wait_for(pid) == 0);
  const std::string output = nvj::cli::read_text_file(log);
  std::filesystem::remove_all(dir);
  CHECK(entries_of(output, "ASAN_OPTIONS") ==
        std::vector<std::string>{"ASAN_OPTIONS=detect_leaks=0:abort_on_error=1"});
}

TEST_CASE("a process starts in the working directory it is given", "[process]") {
  char templ[] = "/tmp/nvj-process-test-XXXXXX";
  REQUIRE(::mkdtemp(templ) != nullptr);
  const std::filesystem::path dir = templ;
  const std::string log = (dir / "output").string();
  nvj::cli::SpawnOptions options;
  options.output_file = log;
  options.directory = dir.string();
  CHECK(nvj::cli::wait_for(nvj::cli::spawn({"pwd"}, options)) == 0);
  const std::string output = nvj::cli::read_text_file(log);
  std::filesystem::remove_all(dir);
  CHECK(output == dir.string() + "\n");
}

TEST_CASE("an environment entry that is not NAME=VALUE is refused naming it", "[process]") {
  CHECK_THROWS_WITH(run({"true"}, {"NVJ_TEST_VARIABLE"}),
                    "environment entry 'NVJ_TEST_VARIABLE' is not NAME=VALUE");
  CHECK_THROWS_AS(run({"true"}, {"=value"}), std::invalid_argument);
}

TEST_CASE("a command's output is read whole from a file no one else sees, gone even if nvj is killed", "[process]") {
  // The child's stdout, a moment after it started: already unlinked, so a
  // SIGKILL of nvj leaves nothing in /tmp.
  const auto r = run({"sh", "-c", "sleep 0.2; readlink /proc/$$/fd/1"});
  REQUIRE(r.status == 0);
  INFO(r.output);
  CHECK(r.output.rfind("/tmp/nvj-run-", 0) == 0);
  CHECK(r.output.find(" (deleted)") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(r.output.substr(0, r.output.find(' '))));
  // More than one read's worth, stdout and stderr in one stream.
  const auto big = run({"sh", "-c", "head -c 200000 /dev/zero | tr '\\0' x; echo; echo err >&2"});
  CHECK(big.output.size() == 200005);
  CHECK(big.output.substr(200000) == "\nerr\n");
}

}  // namespace process_test
