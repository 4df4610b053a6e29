#include "tools/workloads/workload_commands.h"

#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include "tools/nvj/args.h"
#include "tools/workloads/progress_line.h"
#include "tools/workloads/synctest.h"
#include "tools/workloads/writers.h"

namespace nvj::workloads {
namespace {

constexpr const char* kSynctestHelp = R"(Usage: nvj synctest DIR [OPTION]...

The mail transfer agent simulator of Morton's ext3 tests: PROCESSES
processes, PER-DIR of them in each directory DIR/dN; each, for PASSES
names: create a file, write MIN..MAX bytes to it (exponentially distributed
with mean MEAN, drawn again above MAX), optionally fsync it, close it,
optionally fsync the directory, rename it three times (fsyncing the
directory after each when asked), and unlink the file it created UNLINK-LAG
passes before. Prints the completion time, operations per second and the
fsync latency distribution. Seeded: the same options write the same sizes.

  --processes N    processes (default 100)
  --per-dir N      processes per directory (default 1: 100 directories)
  --passes N       files per process (default 100)
  --min-size S     smallest file (default 5K)
  --max-size S     largest file (default 250K)
  --mean-size S    mean file size (default 30K)
  --fsync-file     fsync each file before closing it
  --fsync-dir      fsync the directory after the close and after each rename
  --sync-tree      chattr +S the directories (every operation synchronous)
  --unlink-lag N   unlink the file of N passes before (default 30)
  --seed N         seed of the sizes (default 1)
  --json           print the result as one JSON object
)";

constexpr const char* kWritersHelp = R"(Usage: nvj writers DIR [OPTION]...

The parallel writer of the Tux3 out-of-space tests: TASKS processes, each
creating its own file DIR/dK/tI and writing CHUNKS chunks of CHUNK-SIZE
bytes to it, optionally fsyncing. The first error ends the run: the other
tasks are killed and the task, what it did and the errno are printed (exit
status 1). ROUNDS rewrite the same files. Prints the time and how full the
filesystem is at the end.

  --tasks N        tasks (default 1000)
  --chunks N       chunks per task (default 40)
  --chunk-size S   bytes per chunk (default 1K)
  --dirs N         directories the tasks are spread over (default 9)
  --rounds N       rounds (default 1)
  --fsync WHEN     none (default), each (after every chunk), end (after the last)
  --verify         write nothing: check that the files of a completed run with
                   the same options are all there, every chunk of the last
                   round as written (exit 1 listing the first losses)
  --json           print the result as one JSON object
)";

// writers --verify: the files against the ledger of a completed run.
int verify_writers_command(const WritersOptions& o, bool json) {
  std::vector<WritersResult::Ledger> ledger;
  try {
    ledger = completed_writers_ledger(o);
  } catch (const std::invalid_argument& e) {
    throw cli::UsageError(std::string("nvj writers: ") + e.what());
  }
  const std::vector<WritersLoss> losses = verify_writers(o, ledger);
  constexpr std::size_t kShown = 10;
  if (json) {
    std::string list;
    for (std::size_t i = 0; i < losses.size() && i < kShown; ++i) {
      if (i != 0) list += ',';
      list += json_string(losses[i].detail);
    }
    std::printf("{\"tasks\":%u,\"chunks\":%u,\"round\":%u,\"tasks_with_losses\":%zu,\"losses\":[%s]}\n", o.tasks,
                o.chunks, o.rounds - 1, losses.size(), list.c_str());
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

}  // namespace

int synctest_command(const std::vector<std::string>& argv) {
  cli::Args args("synctest", argv);
  SynctestOptions o;
  bool json = false;
  std::string item;
  while (args.next(item)) {
    if (item == "--help" || item == "-h") {
      std::fputs(kSynctestHelp, stdout);
      return 0;
    } else if (item == "--processes") {
      o.processes = static_cast<std::uint32_t>(args.number(item, 1, 10000));
    } else if (item == "--per-dir") {
      o.per_directory = static_cast<std::uint32_t>(args.number(item, 1, 10000));
    } else if (item == "--passes") {
      o.passes = static_cast<std::uint32_t>(args.number(item, 1, 1000000));
    } else if (item == "--min-size") {
      o.min_size = args.bytes(item, 0, 1ull << 30);
    } else if (item == "--max-size") {
      o.max_size = args.bytes(item, 1, 1ull << 30);
    } else if (item == "--mean-size") {
      o.mean_size = args.bytes(item, 1, 1ull << 30);
    } else if (item == "--fsync-file") {
      o.fsync_file = true;
    } else if (item == "--fsync-dir") {
      o.fsync_directory = true;
    } else if (item == "--sync-tree") {
      o.sync_tree = true;
    } else if (item == "--unlink-lag") {
      o.unlink_lag = static_cast<std::uint32_t>(args.number(item, 0, 1000000));
    } else if (item == "--seed") {
      o.seed = args.number(item, 0, ~std::uint64_t{0});
    } else if (item == "--json") {
      json = true;
    } else if (item.rfind('-', 0) != 0 && o.directory.empty()) {
      o.directory = item;
    } else {
      args.unknown(item);
    }
  }
  if (o.directory.empty()) throw cli::UsageError("nvj synctest: no directory given (nvj synctest --help)");
  SynctestResult r;
  try {
    ProgressLine bar(stderr, "files");
    r = run_synctest(o, [&](std::uint64_t done, std::uint64_t total) { bar.update(done, total); });
  } catch (const std::invalid_argument& e) {
    throw cli::UsageError(std::string("nvj synctest: ") + e.what());
  }
  if (json) {
    std::printf("%s\n", r.json().c_str());
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
    std::fprintf(stderr, "nvj synctest: %s\n", r.failure->describe().c_str());
    return 1;
  }
  return 0;
}

int writers_command(const std::vector<std::string>& argv) {
  cli::Args args("writers", argv);
  WritersOptions o;
  bool json = false;
  bool verify = false;
  std::string item;
  while (args.next(item)) {
    if (item == "--help" || item == "-h") {
      std::fputs(kWritersHelp, stdout);
      return 0;
    } else if (item == "--tasks") {
      o.tasks = static_cast<std::uint32_t>(args.number(item, 1, 100000));
    } else if (item == "--chunks") {
      o.chunks = static_cast<std::uint32_t>(args.number(item, 1, 100000000));
    } else if (item == "--chunk-size") {
      o.chunk_size = static_cast<std::uint32_t>(args.bytes(item, 16, 1u << 24));
    } else if (item == "--dirs") {
      o.directories = static_cast<std::uint32_t>(args.number(item, 1, 100000));
    } else if (item == "--rounds") {
      o.rounds = static_cast<std::uint32_t>(args.number(item, 1, 1000000));
    } else if (item == "--fsync") {
      const std::string v = args.value(item);
      if (v == "none") o.sync = WritersSync::none;
      else if (v == "each") o.sync = WritersSync::each;
      else if (v == "end") o.sync = WritersSync::end;
      else throw cli::UsageError("nvj writers: --fsync=" + v + ": expected none, each or end");
    } else if (item == "--json") {
      json = true;
    } else if (item == "--verify") {
      verify = true;
    } else if (item.rfind('-', 0) != 0 && o.directory.empty()) {
      o.directory = item;
    } else {
      args.unknown(item);
    }
  }
  if (o.directory.empty()) throw cli::UsageError("nvj writers: no directory given (nvj writers --help)");
  if (verify) return verify_writers_command(o, json);
  WritersResult r;
  try {
    ProgressLine bar(stderr, "steps");
    r = run_writers(o, [&](std::uint64_t done, std::uint64_t total) { bar.update(done, total); });
  } catch (const std::invalid_argument& e) {
    throw cli::UsageError(std::string("nvj writers: ") + e.what());
  }
  if (json) {
    std::printf("%s\n", r.json().c_str());
  } else {
    std::printf("writers: %u tasks x %u chunks of %u bytes in %u directories, %u round(s)\n", o.tasks, o.chunks,
                o.chunk_size, o.directories, o.rounds);
    std::printf("  time        %.3f s\n", r.seconds);
    std::printf("  written     %.1f MiB acknowledged, %u round(s) complete\n",
                static_cast<double>(r.bytes) / 1048576.0, r.rounds_done);
    std::printf("  fill        %.1f%% of the filesystem's blocks in use\n", 100.0 * r.fill);
  }
  if (r.failure) {
    std::fprintf(stderr, "nvj writers: %s\n", r.failure->describe().c_str());
    return 1;
  }
  return 0;
}

}  // namespace nvj::workloads
