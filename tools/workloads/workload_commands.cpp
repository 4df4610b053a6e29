// SPDX-License-Identifier: BSD-3-Clause
#include "tools/workloads/workload_commands.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/command_line.h"
#include "common/json.h"
#include "tools/workloads/progress_line.h"
#include "tools/workloads/synctest.h"
#include "tools/workloads/writers.h"

namespace nvj::workloads {
namespace {

constexpr const char* kSynctestText = R"(The mail transfer agent simulator of Morton's ext3 tests: PROCESSES
processes, PER-DIR of them in each directory DIR/dN; each, for PASSES
names: create a file, write MIN..MAX bytes to it (exponentially distributed
with mean MEAN, drawn again above MAX), optionally fsync it, close it,
optionally fsync the directory, rename it three times (fsyncing the
directory after each when asked), and unlink the file it created UNLINK-LAG
passes before. Prints the completion time, operations per second and the
fsync latency distribution. Seeded: the same options write the same sizes.
)";

constexpr const char* kWritersText = R"(The parallel writer of the Tux3 out-of-space tests: TASKS processes, each
creating its own file DIR/dK/tI and writing CHUNKS chunks of CHUNK-SIZE
bytes to it, optionally fsyncing. The first error ends the run: the other
tasks are killed and the task, what it did and the errno are printed (exit
status 1). ROUNDS rewrite the same files (truncated first, or written over in
place with --overwrite, as an existing file is in the first round then). Prints the time and how full the
filesystem is at the end.
)";

// writers --verify: the files against the ledger of a completed run.
int verify_writers_command(const WritersOptions& o, bool json, const std::string& path) {
  std::vector<WritersResult::Ledger> ledger;
  try {
    ledger = completed_writers_ledger(o);
  } catch (const std::invalid_argument& e) {
    throw cli::UsageError(path + ": " + e.what());
  }
  const std::vector<WritersLoss> losses = verify_writers(o, ledger);
  constexpr std::size_t kShown = 10;
  if (json) {
    Json shown = Json::array();
    for (std::size_t i = 0; i < losses.size() && i < kShown; ++i) shown.push_back(losses[i].detail);
    const Json j{{"tasks", o.tasks},
                 {"chunks", o.chunks},
                 {"round", o.rounds - 1},
                 {"tasks_with_losses", losses.size()},
                 {"losses", shown}};
    std::printf("%s\n", to_json_text(j).c_str());
  } else if (losses.empty()) {
    std::printf("writers --verify: %u tasks x %u chunks of round %u: every chunk is there\n", o.tasks, o.chunks,
                o.rounds - 1);
  } else {
    std::printf("writers --verify: %zu of %u tasks lost acknowledged chunks of round %u:\n", losses.size(), o.tasks,
                o.rounds - 1);
    for (std::size_t i = 0; i < losses.size() && i < kShown; ++i) std::printf("  %s\n", losses[i].detail.c_str());
    if (losses.size() > kShown) std::printf("  ... and %zu more\n", losses.size() - kShown);
  }
  return losses.empty() ? 0 : 1;
}

struct SynctestArgs {
  SynctestOptions o;
  bool json = false;
};

struct WritersArgs {
  WritersOptions o;
  std::uint64_t chunk_size = 1024;
  std::string sync = "none";
  bool json = false;
  bool verify = false;
  bool dirs_given = false;
};

// --control, or NVJ_CONTROL in the environment (what nvj crash run sets).
void default_control(std::string& control) {
  const char* env = std::getenv("NVJ_CONTROL");
  if (control.empty() && env != nullptr) control = env;
}

int synctest_main(SynctestArgs& a, const std::string& path) {
  SynctestOptions& o = a.o;
  const bool json = a.json;
  default_control(o.control);
  if (o.directory.empty()) throw cli::UsageError(path + ": no directory given (" + path + " --help)");
  SynctestResult r;
  try {
    ProgressLine bar(stderr, "files");
    r = run_synctest(o, [&](std::uint64_t done, std::uint64_t total) { bar.update(done, total); });
  } catch (const std::invalid_argument& e) {
    throw cli::UsageError(path + ": " + e.what());
  }
  if (json) {
    std::printf("%s\n", to_json_text(r.json()).c_str());
  } else {
    std::printf("synctest: %u processes, %u per directory (%u directories), %u passes\n", o.processes,
                o.per_directory, o.directories(), o.passes);
    std::printf("  time        %.2f s\n", r.seconds);
    std::printf("  files       %llu (%.1f MiB), %.1f files/s\n", static_cast<unsigned long long>(r.files),
                static_cast<double>(r.bytes) / 1048576.0, r.files_per_second());
    std::printf("  operations  %llu, %.1f/s\n", static_cast<unsigned long long>(r.operations),
                r.operations_per_second());
    std::printf("  fsync file  %s\n", r.fsync_file.text().c_str());
    std::printf("  fsync dir   %s\n", r.fsync_directory.text().c_str());
  }
  if (r.failure) {
    std::fprintf(stderr, "%s: %s\n", path.c_str(), r.failure->describe().c_str());
    return 1;
  }
  return 0;
}

int writers_main(WritersArgs& a, const std::string& path) {
  WritersOptions& o = a.o;
  const bool json = a.json;
  o.chunk_size = static_cast<std::uint32_t>(a.chunk_size);
  o.sync = a.sync == "each" ? WritersSync::each : a.sync == "end" ? WritersSync::end : WritersSync::none;
  // The default never makes a valid command an error: no more directories
  // than tasks unless --dirs says so (which is then refused).
  if (!a.dirs_given) o.directories = std::min(o.directories, o.tasks);
  if (!a.verify) default_control(o.control);
  if (o.directory.empty()) throw cli::UsageError(path + ": no directory given (" + path + " --help)");
  if (a.verify) return verify_writers_command(o, json, path);
  WritersResult r;
  try {
    ProgressLine bar(stderr, "steps");
    r = run_writers(o, [&](std::uint64_t done, std::uint64_t total) { bar.update(done, total); });
  } catch (const std::invalid_argument& e) {
    throw cli::UsageError(path + ": " + e.what());
  }
  if (json) {
    std::printf("%s\n", to_json_text(r.json()).c_str());
  } else {
    std::printf("writers: %u tasks x %u chunks of %u bytes in %u directories, %u round(s)\n", o.tasks, o.chunks,
                o.chunk_size, o.directories, o.rounds);
    std::printf("  time        %.3f s\n", r.seconds);
    std::printf("  written     %.1f MiB acknowledged, %u round(s) complete\n",
                static_cast<double>(r.bytes) / 1048576.0, r.rounds_done);
    std::printf("  fill        %.1f%% of the filesystem's blocks in use\n", 100.0 * r.fill);
  }
  if (r.failure) {
    std::fprintf(stderr, "%s: %s\n", path.c_str(), r.failure->describe().c_str());
    return 1;
  }
  return 0;
}

}  // namespace

void add_workload_commands(cli::CommandLine& program) {
  program.add("synctest", "the MTA simulator of Morton's ext3 tests, on a directory", declare_synctest);
  program.add("writers", "the parallel writer of the Tux3 out-of-space tests, on a directory", declare_writers);
  program.add("mark", "mark a point in a running server's time (and its recording)", declare_mark);
}

cli::CommandRun declare_synctest(cli::Command& app) {
  auto a = std::make_shared<SynctestArgs>();
  SynctestOptions& o = a->o;
  app.describe(kSynctestText);
  app.add("DIR", o.directory, "the directory to work in (created if missing)");
  app.count("--processes", o.processes, 1u, 10000u, "processes (default 100)");
  app.count("--per-dir", o.per_directory, 1u, 10000u, "processes per directory (default 1: 100 directories)");
  app.count("--passes", o.passes, 1u, 1000000u, "files per process (default 100)");
  app.size("--min-size", o.min_size, 0, 1ull << 30, "smallest file (default 5K)");
  app.size("--max-size", o.max_size, 1, 1ull << 30, "largest file (default 250K)");
  app.size("--mean-size", o.mean_size, 1, 1ull << 30, "mean file size (default 30K)");
  app.flag("--fsync-file", o.fsync_file, "fsync each file before closing it");
  app.flag("--fsync-dir", o.fsync_directory, "fsync the directory after the close and after each rename");
  app.flag("--sync-tree", o.sync_tree, "chattr +S the directories (every operation synchronous)");
  app.count("--unlink-lag", o.unlink_lag, 0u, 1000000u, "unlink the file of N passes before (default 30)");
  app.count("--seed", o.seed, 0, ~std::uint64_t{0}, "seed of the sizes (default 1)");
  app.add("--control", o.control,
          "post facts as marks to this server's control socket (default: $NVJ_CONTROL; see FACTS)")
      .value_name("CONTROL");
  app.add("--fact-root", o.fact_root, "the filesystem's root that facts name paths from (default: $NVJ_MNT, or .)")
      .value_name("DIR");
  app.flag("--json", a->json, "print the result as one JSON object");
  return [a, app] { return synctest_main(*a, app.path()); };
}

cli::CommandRun declare_writers(cli::Command& app) {
  auto a = std::make_shared<WritersArgs>();
  WritersOptions& o = a->o;
  app.describe(kWritersText);
  app.add("DIR", o.directory, "the directory to work in (created if missing)");
  app.count("--tasks", o.tasks, 1u, 100000u, "tasks (default 1000)");
  app.count("--chunks", o.chunks, 1u, 100000000u, "chunks per task (default 40)");
  app.size("--chunk-size", a->chunk_size, 16, 1u << 24, "bytes per chunk (default 1K)");
  app.count("--dirs", o.directories, 1u, 100000u, "directories the tasks are spread over (default 9, or --tasks if fewer)")
      .on_given([a] { a->dirs_given = true; });
  app.count("--rounds", o.rounds, 1u, 1000000u, "rounds (default 1)");
  app.flag("--overwrite", o.overwrite,
           "write over existing files' blocks in place instead of truncating them first");
  app.choice("--fsync", a->sync, {"none", "each", "end"},
                  "none (default), each (after every chunk), end (after the last)");
  app.flag("--verify", a->verify,
               "write nothing: check that the files of a completed run with the same options are all there, every "
               "chunk of the last round as written (exit 1 listing the first losses)");
  app.add("--control", o.control,
          "post facts as marks to this server's control socket (default: $NVJ_CONTROL; see FACTS)")
      .value_name("CONTROL");
  app.add("--fact-root", o.fact_root, "the filesystem's root that facts name paths from (default: $NVJ_MNT, or .)")
      .value_name("DIR");
  app.flag("--json", a->json, "print the result as one JSON object");
  return [a, app] { return writers_main(*a, app.path()); };
}

}  // namespace nvj::workloads
