// SPDX-License-Identifier: BSD-3-Clause
// The workload generators on a real directory: what synctest leaves behind
// and counts, what the parallel writer writes and how a lost acknowledged
// chunk is found, also by `writers --verify` after a completed run; their
// JSON, read back.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "common/command_line.h"
#include "common/json.h"
#include "tools/workloads/synctest.h"
#include "tools/workloads/workload_commands.h"
#include "tools/workloads/writers.h"

namespace workloads_test {

namespace fs = std::filesystem;
using namespace nvj::workloads;

namespace {

struct TempDir {
  fs::path path;
  TempDir() {
    std::string t = (fs::temp_directory_path() / "nvj-workloads-XXXXXX").string();
    REQUIRE(::mkdtemp(t.data()) != nullptr);
    path = t;
  }
  ~TempDir() { fs::remove_all(path); }
};

}  // namespace

TEST_CASE("synctest keeps the last unlink-lag files of each process, with the drawn sizes", "[workloads]") {
  TempDir tmp;
  SynctestOptions o;
  o.directory = (tmp.path / "tree").string();
  o.processes = 6;
  o.per_directory = 3;
  o.passes = 12;
  o.unlink_lag = 5;
  o.fsync_file = true;
  o.fsync_directory = true;
  o.seed = 7;
  const SynctestResult r = run_synctest(o);
  REQUIRE_FALSE(r.failure);
  CHECK(r.files == 72);
  // Per pass: create, write, fsync, close-fsync of the directory, 3 renames
  // each with a directory fsync, and (after the lag) an unlink.
  CHECK(r.operations == 72 * (2 + 1 + 1 + 3 * 2) + 6 * (12 - 5));
  CHECK(r.fsync_file.count == 72);
  CHECK(r.fsync_directory.count == 72 * 4);
  CHECK(r.fsync_file.p50_us <= r.fsync_file.p99_us);
  CHECK(r.fsync_file.p99_us <= r.fsync_file.max_us);

  std::uint64_t bytes = 0;
  for (std::uint32_t p = 0; p < o.processes; ++p) {
    const std::vector<std::uint64_t> sizes = synctest_file_sizes(o, p);
    REQUIRE(sizes.size() == o.passes);
    for (std::uint32_t pass = 0; pass < o.passes; ++pass) {
      std::string name = 'p' + std::to_string(p);
      name += '-';
      name += std::to_string(pass);
      name += ".r3";
      const fs::path f = tmp.path / "tree" / ('d' + std::to_string(p / 3)) / name;
      const std::uint64_t size = sizes[pass];
      CHECK(size >= o.min_size);
      CHECK(size <= o.max_size);
      bytes += size;
      CHECK(fs::exists(f) == (pass >= o.passes - o.unlink_lag));
      if (fs::exists(f)) CHECK(fs::file_size(f) == size);
    }
  }
  CHECK(r.bytes == bytes);

  // The JSON says the same, numbers as numbers.
  const nvj::Json j = nvj::parse_json(nvj::to_json_text(r.json()), "synctest --json");
  CHECK(j["files"] == 72);
  CHECK(j["operations"] == r.operations);
  CHECK(j["bytes"] == bytes);
  CHECK(j["seconds"].get<double>() == Approx(r.seconds).margin(0.0005));
  CHECK(j["fsync_file"]["count"] == 72);
  CHECK(j["fsync_directory"]["count"] == 72 * 4);
  CHECK(j["fsync_file"]["max_us"].get<double>() == Approx(r.fsync_file.max_us).margin(0.05));
  CHECK(j["failure"].is_null());
  std::size_t entries = 0;
  for ([[maybe_unused]] const auto& e : fs::recursive_directory_iterator(tmp.path / "tree")) ++entries;
  CHECK(entries == 2 + 6 * 5);  // two directories, five files of each process

  // Seeded: the same seed draws the same sizes, another seed others.
  SynctestOptions other = o;
  other.seed = 8;
  CHECK(synctest_file_sizes(o, 0) == synctest_file_sizes(o, 0));
  CHECK(synctest_file_sizes(o, 0) != synctest_file_sizes(other, 0));

  // A second run into the same tree is refused before anything is touched.
  CHECK_THROWS_WITH(run_synctest(o), Catch::Contains("is not empty"));
}

TEST_CASE("synctest draws sizes whose mean is the asked mean", "[workloads]") {
  SynctestOptions o;
  o.passes = 20000;
  double sum = 0;
  for (const std::uint64_t size : synctest_file_sizes(o, 3)) sum += static_cast<double>(size);
  // The cut at 250 KiB lowers the mean a little: well within 5% at 30 KiB.
  CHECK(sum / o.passes == Approx(30 * 1024).epsilon(0.05));
}

TEST_CASE("synctest refuses bad options naming them", "[workloads]") {
  SynctestOptions o;
  o.directory = "/nonexistent/never";
  o.per_directory = 101;
  CHECK_THROWS_WITH(run_synctest(o), Catch::Contains("--per-dir"));
  o.per_directory = 1;
  o.mean_size = 1024;
  CHECK_THROWS_WITH(run_synctest(o), Catch::Contains("--mean-size"));
}

TEST_CASE("writers write every acknowledged chunk and the check finds a damaged one", "[workloads]") {
  TempDir tmp;
  WritersOptions o;
  o.directory = tmp.path.string();
  o.tasks = 12;
  o.chunks = 9;
  o.directories = 3;
  o.rounds = 2;
  o.sync = WritersSync::end;
  const WritersResult r = run_writers(o);
  REQUIRE_FALSE(r.failure);
  CHECK(r.rounds_done == 2);
  CHECK(r.bytes == 2ull * 12 * 9 * 1024);
  CHECK(r.fill > 0);
  REQUIRE(r.ledger.size() == 12);
  for (const auto& l : r.ledger) {
    CHECK(l.exists);
    CHECK(l.round == 1);
    CHECK(l.chunks == 9);
  }
  CHECK(fs::file_size(writers_file(o, 5)) == 9 * 1024);
  CHECK(writers_file(o, 5) == (tmp.path / "d2" / "t5").string());
  CHECK(verify_writers(o, r.ledger).empty());

  // One byte of task 4's chunk 6 changed: found, named.
  {
    std::fstream f(writers_file(o, 4), std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(6 * 1024 + 100);
    f.put('\x5a');
  }
  auto losses = verify_writers(o, r.ledger);
  REQUIRE(losses.size() == 1);
  CHECK(losses[0].task == 4);
  CHECK_THAT(losses[0].detail, Catch::Contains("chunk 6 of round 1 differs"));

  // A file cut short loses its acknowledged tail.
  fs::resize_file(writers_file(o, 7), 3 * 1024);
  losses = verify_writers(o, r.ledger);
  REQUIRE(losses.size() == 2);
  CHECK_THAT(losses[1].detail, Catch::Contains("chunk 3 of round 1 is missing"));
}

TEST_CASE("writers --overwrite writes over existing files' blocks in place", "[workloads]") {
  TempDir tmp;
  WritersOptions o;
  o.directory = tmp.path.string();
  o.tasks = 3;
  o.chunks = 4;
  o.directories = 1;
  o.rounds = 2;
  o.overwrite = true;
  o.sync = WritersSync::each;
  // A mark that the next round must not lose: a byte past the file's last chunk.
  WritersOptions first = o;
  first.rounds = 1;
  REQUIRE_FALSE(run_writers(first).failure);
  {
    std::ofstream(writers_file(o, 1), std::ios::app | std::ios::binary) << 'Z';
  }
  const WritersResult r = run_writers(o);
  REQUIRE_FALSE(r.failure);
  CHECK(verify_writers(o, r.ledger).empty());  // every chunk is round 1's
  // Not truncated: the byte past the chunks is still there; the others are as long as their chunks.
  CHECK(fs::file_size(writers_file(o, 1)) == 4 * 1024 + 1);
  CHECK(fs::file_size(writers_file(o, 0)) == 4 * 1024);
  std::ifstream in(writers_file(o, 1), std::ios::binary);
  in.seekg(4 * 1024);
  CHECK(in.get() == 'Z');
  o.overwrite = false;
  REQUIRE_FALSE(run_writers(o).failure);
  CHECK(fs::file_size(writers_file(o, 1)) == 4 * 1024);  // truncated first
}

TEST_CASE("writers: the first error ends the run naming the task and the errno", "[workloads]") {
  TempDir tmp;
  WritersOptions o;
  o.directory = tmp.path.string();
  o.tasks = 4;
  o.chunks = 3;
  o.directories = 1;
  // Task 2's file is a directory already: its create fails with EISDIR.
  fs::create_directories(tmp.path / "d0" / "t2");
  const WritersResult r = run_writers(o);
  REQUIRE(r.failure);
  CHECK(r.failure->task == 2);
  CHECK(r.failure->error == EISDIR);
  CHECK_THAT(r.failure->describe(), Catch::Contains("task 2: create d0/t2") && Catch::Contains("(EISDIR)"));
  CHECK(r.rounds_done == 0);
  CHECK_FALSE(r.ledger[2].exists);
  const nvj::Json j = nvj::parse_json(nvj::to_json_text(r.json()), "writers --json");
  CHECK(j["failure"] == r.failure->describe());
  CHECK(j["failure_errno"] == "EISDIR");
  CHECK(j["rounds_done"] == 0);
}

TEST_CASE("a failure's description is one JSON string whatever it holds", "[workloads]") {
  // Quotes, backslashes and control characters (a file name is bytes) are
  // escaped, not dropped; bytes that are not UTF-8 become U+FFFD.
  TaskFailure f{3, "create \"a\\b\"\n\x01 \xff", EIO};
  const nvj::Json j = nvj::parse_json(nvj::to_json_text(failure_json(f)), "failure");
  CHECK(j == "task 3: create \"a\\b\"\n\x01 \xEF\xBF\xBD: Input/output error (EIO)");
  CHECK(failure_json(std::nullopt).is_null());

  // A writers run whose task ended without an errno: failure_errno is null.
  WritersResult r;
  r.failure = TaskFailure{1, "killed by signal 9", 0};
  const nvj::Json w = r.json();
  REQUIRE(w.contains("failure_errno"));
  CHECK(w["failure_errno"].is_null());
  r.failure.reset();
  CHECK_FALSE(r.json().contains("failure_errno"));
}

namespace {

// `nvj writers WORDS...`, as nvj runs it: the exit status, usage errors thrown.
int writers_command(std::vector<std::string> words) {
  nvj::cli::CommandLine nvj("nvj", "nvjournal.\n", "0");
  nvj::workloads::add_workload_commands(nvj);
  words.insert(words.begin(), {"nvj", "writers"});
  std::vector<const char*> argv;
  for (const auto& w : words) argv.push_back(w.c_str());
  return nvj.execute(static_cast<int>(argv.size()), argv.data());
}

}  // namespace

TEST_CASE("writers --verify checks a completed run's files and names the first loss", "[workloads]") {
  TempDir tmp;
  const std::string dir = (tmp.path / "w").string();
  WritersOptions o;
  o.directory = dir;
  o.tasks = 6;
  o.chunks = 5;
  o.directories = 2;
  o.rounds = 2;
  REQUIRE_FALSE(run_writers(o).failure);
  const auto ledger = completed_writers_ledger(o);
  REQUIRE(ledger.size() == 6);
  CHECK(ledger[3].exists);
  CHECK(ledger[3].round == 1);
  CHECK(ledger[3].chunks == 5);

  const std::vector<std::string> same{dir, "--tasks", "6", "--chunks", "5", "--dirs", "2", "--rounds", "2", "--verify"};
  CHECK(writers_command(same) == 0);
  // The same files checked as if written by one round: every chunk differs.
  CHECK(writers_command({dir, "--tasks", "6", "--chunks", "5", "--dirs", "2", "--verify"}) == 1);
  // A task's file cut short: found.
  fs::resize_file(writers_file(o, 3), 2 * 1024);
  CHECK(writers_command(same) == 1);
  auto losses = verify_writers(o, ledger);
  REQUIRE(losses.size() == 1);
  CHECK_THAT(losses[0].detail, Catch::Contains("d1/t3: acknowledged chunk 2 of round 1 is missing"));
  // A file gone: found too.
  fs::remove(writers_file(o, 4));
  losses = verify_writers(o, ledger);
  REQUIRE(losses.size() == 2);
  CHECK_THAT(losses[1].detail, Catch::Contains("d0/t4: missing"));

  // Bad input is a usage error, as for a run.
  CHECK_THROWS_WITH(writers_command({dir, "--tasks", "0", "--verify"}),
                    "nvj writers: --tasks=0: expected a whole number from 1 to 100000");
  CHECK_THROWS_WITH(writers_command({dir, "--tasks", "2", "--dirs", "3", "--verify"}),
                    Catch::Contains("--dirs must be between 1 and --tasks (2): give --dirs 2 or fewer, or --tasks 3 or more"));
  CHECK_THROWS_AS(writers_command({"--verify"}), nvj::cli::UsageError);
  // Fewer tasks than the default 9 directories, --dirs not given: one
  // directory a task, never an error.
  const std::string few = dir + "/few";
  CHECK(writers_command({few, "--tasks", "4", "--chunks", "2"}) == 0);
  for (int d = 0; d < 4; ++d) CHECK(fs::is_directory(few + "/d" + std::to_string(d)));
  CHECK_FALSE(fs::exists(few + "/d4"));
}

}  // namespace workloads_test
