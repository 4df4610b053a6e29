// SPDX-License-Identifier: BSD-3-Clause
// Clearing stale run folders: a folder whose owner is gone is cleared and
// removed once, by the nvj that holds the lock on its owner file; one whose
// owner lives, or whose lock another process holds, is left as it is.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>

#include "common/unique_fd.h"
#include "tests/support/temp_dir.h"
#include "tools/nvj/host/processes/run_folder.h"

namespace run_folder_test {

namespace fs = std::filesystem;
using nvj::UniqueFd;
using nvj::cli::clear_stale_runs;

// Makes ROOT/NAME with an owner file "PID STARTED" and a file inside.
fs::path make_run(const fs::path& root, const std::string& name, const std::string& owner) {
  const fs::path folder = root / name;
  fs::create_directories(folder);
  std::ofstream(folder / "owner") << owner << "\n";
  std::ofstream(folder / "left") << "a file the run left\n";
  return folder;
}

// This process's start time, field 22 of /proc/self/stat.
std::string own_start_time() {
  std::ifstream in("/proc/self/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::istringstream fields(stat.substr(stat.rfind(')') + 2));
  std::string field;
  for (int i = 3; i <= 22; ++i) fields >> field;
  return field;
}

TEST_CASE("a stale run folder is cleared once; a live one and a locked one are left", "[run_folder]") {
  const nvj::test::TempDir root;
  const std::string me = std::to_string(::getpid());
  // This PID with another start time: a process the PID belonged to before.
  const fs::path stale = make_run(root.path, "check-1", me + " 0");
  const fs::path live = make_run(root.path, "check-2", me + " " + own_start_time());
  const fs::path other_kind = make_run(root.path, "run-3", me + " 0");

  SECTION("another process clearing it holds the lock: left to it") {
    const UniqueFd held(::open((stale / "owner").c_str(), O_RDONLY | O_CLOEXEC));
    REQUIRE(held.valid());
    REQUIRE(::flock(held.get(), LOCK_EX | LOCK_NB) == 0);
    CHECK(clear_stale_runs("check", root.path).empty());
    CHECK(fs::exists(stale / "left"));
    ::flock(held.get(), LOCK_UN);
    const auto cleared = clear_stale_runs("check", root.path);
    REQUIRE(cleared.size() == 1);
    CHECK(cleared[0] == stale.string() + " (nothing but the folder)");
    CHECK_FALSE(fs::exists(stale));
  }
  SECTION("cleared, then nothing left to clear") {
    const auto cleared = clear_stale_runs("check", root.path);
    REQUIRE(cleared.size() == 1);
    CHECK(cleared[0].rfind(stale.string() + " (", 0) == 0);
    CHECK_FALSE(fs::exists(stale));
    CHECK(clear_stale_runs("check", root.path).empty());
  }
  // The live owner's folder and another kind's are never touched.
  CHECK(fs::exists(live / "left"));
  CHECK(fs::exists(other_kind / "left"));
}

}  // namespace run_folder_test
