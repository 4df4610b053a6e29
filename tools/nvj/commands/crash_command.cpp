// SPDX-License-Identifier: BSD-3-Clause
// nvj crash: the crash lab. `states` reads a recording (the plugin's
// record=, POST /record/start) and says which crash states of it would be
// checked: the crash points, the changes volatile at each, and the states
// per strategy with identical contents merged (crashlab/crash_states.h).
// `check` checks them (tools/nvj/crash/check_command.h), `merge` joins the
// results of shards.
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>

#include "common/command_line.h"
#include "common/json.h"
#include "crashlab/crash_check.h"
#include "crashlab/crash_points.h"
#include "crashlab/crash_states.h"
#include "fscore/record/fact.h"
#include "crashlab/recording_index.h"
#include "tools/nvj/commands.h"
#include "tools/nvj/crash/check_command.h"
#include "tools/nvj/crash/crash_report.h"
#include "tools/nvj/crash/frames_command.h"
#include "tools/nvj/crash/log_command.h"
#include "tools/nvj/crash/run_command.h"
#include "tools/nvj/explore/explore_command.h"
#include "tools/nvj/explore/explore_report.h"
#include "tools/nvj/host/mapped_file.h"

namespace nvj::cli {
namespace {

using crashlab::CrashPoint;
using crashlab::Enumeration;
using crashlab::RecordingIndex;
using crashlab::Strategy;

constexpr const char* kCrashText = R"(The crash lab: which states of a recorded run a power cut could leave, and
whether the filesystem on them keeps what the workload made durable.
)";

constexpr const char* kStatesText = R"(Read RECORDING (the plugin's record=) and count the crash states that would be
checked: the crash points (after every mark, every flush or FUA completion,
optionally every N changes, and the end), the changes volatile at each, and
per strategy the states tried and those with contents no earlier state had.
)";

struct StatesArgs {
  std::string recording;
  bool no_marks = false, no_persistence = false, json = false;
  std::uint64_t every = 0;
  crashlab::StrategyOptions strategies;
};

// Marks that are facts; a malformed one is an error naming the mark.
std::size_t count_facts(const RecordingIndex& index) {
  std::size_t facts = 0;
  for (const auto& f : crashlab::facts_of(index)) facts += f.has_value();
  return facts;
}

std::string mib(std::uint64_t bytes) { return fmt::format("{:.1f} MiB", static_cast<double>(bytes) / 1048576.0); }

int states_main(const StatesArgs& a) {
  const MappedFile file(a.recording);
  const RecordingIndex index(file.bytes());
  const std::size_t facts = count_facts(index);
  crashlab::CrashPointOptions where;
  where.marks = !a.no_marks;
  where.persistence = !a.no_persistence;
  where.every = a.every;
  const std::vector<CrashPoint> points = crashlab::crash_points(index, where);
  const Enumeration e = crashlab::enumerate_crash_states(index, points, a.strategies, {});

  std::size_t at_marks = 0, at_persistence = 0, at_every = 0, most = 0, sum = 0;
  for (const CrashPoint& p : points) {
    at_marks += (p.reasons & crashlab::kAtMark) != 0;
    at_persistence += (p.reasons & crashlab::kAtPersistence) != 0;
    at_every += (p.reasons & crashlab::kAtEvery) != 0;
    most = std::max(most, p.volatile_changes.size());
    sum += p.volatile_changes.size();
  }
  if (a.json) {
    Json exports = Json::array();
    for (const auto& x : index.exports()) exports.push_back(Json{{"name", x.name}, {"size", x.size}});
    Json strategies = Json::object();
    for (std::size_t s = 0; s < crashlab::kStrategies; ++s)
      strategies[crashlab::to_string(static_cast<Strategy>(s))] =
          Json{{"states", e.by_strategy[s].states}, {"unique", e.by_strategy[s].unique}};
    const Json out{{"recording", a.recording},
                   {"exports", exports},
                   {"changes", index.changes().size()},
                   {"flushes", index.flushes().size()},
                   {"marks", index.marks().size()},
                   {"facts", facts},
                   {"stopped", index.stopped() ? Json(index.stop_reason()) : Json(nullptr)},
                   {"points", Json{{"total", points.size()},
                                   {"at_marks", at_marks},
                                   {"at_persistence", at_persistence},
                                   {"every", at_every},
                                   {"volatile_max", most},
                                   {"volatile_mean", points.empty() ? 0.0
                                                                    : json_round(static_cast<double>(sum) /
                                                                                     static_cast<double>(points.size()),
                                                                                 2)}}},
                   {"strategies", strategies},
                   {"states", e.states},
                   {"unique", e.unique},
                   {"merged_by_contents", e.fingerprints}};
    std::printf("%s\n", to_json_text(out).c_str());
    return 0;
  }
  std::string exports;
  for (const auto& x : index.exports()) exports += (exports.empty() ? "" : ", ") + x.name + " " + mib(x.size);
  std::printf("%s: %zu export(s) (%s), %zu changes, %zu flushes, %zu marks (%zu facts)\n", a.recording.c_str(),
              index.exports().size(), exports.c_str(), index.changes().size(), index.flushes().size(),
              index.marks().size(), facts);
  if (index.stopped()) std::printf("  the recording was stopped early: %s\n", index.stop_reason().c_str());
  if (crashlab::marks_only(index))
    std::printf("  its exports' order is known only at its marks (two dm-log-writes logs): crash points there and at "
                "the end only\n");
  std::string every;
  if (a.every > 0) every = fmt::format(", {} after every {} changes", at_every, a.every);
  std::printf("crash points: %zu (%zu after marks, %zu after persistence points%s, 1 at the end)\n", points.size(),
              at_marks, at_persistence, every.c_str());
  std::printf("volatile changes per point: at most %zu, %.1f on average\n", most,
              points.empty() ? 0.0 : static_cast<double>(sum) / static_cast<double>(points.size()));
  std::printf("%-8s %12s %12s\n", "strategy", "states", "unique");
  for (std::size_t s = 0; s < crashlab::kStrategies; ++s)
    std::printf("%-8s %12llu %12llu\n", crashlab::to_string(static_cast<Strategy>(s)),
                static_cast<unsigned long long>(e.by_strategy[s].states),
                static_cast<unsigned long long>(e.by_strategy[s].unique));
  std::printf("%-8s %12llu %12llu\n", "total", static_cast<unsigned long long>(e.states),
              static_cast<unsigned long long>(e.unique));
  std::printf(e.fingerprints ? "(states with identical contents are counted once under unique)\n"
                             : "(changes off 512-byte sectors, or over 2 GiB of them: states are not merged by contents)\n");
  return 0;
}

// The options that choose crash points and strategies, the same for states
// and check (so that a check's states are those states counted).
void enumeration_options(Command& c, std::uint64_t& every, bool& no_marks, bool& no_persistence,
                         crashlab::StrategyOptions& strategies) {
  c.count("--every", every, 1, ~std::uint64_t{0}, "also a crash point after every N-th change").value_name("N");
  c.flag("--no-marks", no_marks, "no crash points at marks");
  c.flag("--no-persistence", no_persistence, "no crash points at flush and FUA completions");
  c.count("--keep", strategies.keep, 0u, 2u, "subsets of the volatile changes up to this size (default 2)")
      .value_name("K");
  c.count("--random", strategies.random, 0u, 1000000u, "random subsets per crash point (default 0)").value_name("N");
  c.count("--seed", strategies.seed, 0, ~std::uint64_t{0}, "seed of the random subsets (default 1)").value_name("N");
  c.count("--torn", strategies.torn, 0u, 1024u, "torn states per volatile write: cuts at atomic units (default 0)")
      .value_name("N");
  c.size("--torn-unit", strategies.torn_unit, 512, std::uint64_t{1} << 20,
         "the atomic unit torn writes are cut at, a multiple of 512 (default: each export's, from the recording)")
      .value_name("SIZE");
}

// A usage error unless the atomic unit is whole sectors.
void check_torn_unit(const crashlab::StrategyOptions& strategies, const char* command) {
  if (strategies.torn_unit % 512 != 0)
    throw UsageError(std::string(command) + ": --torn-unit " + std::to_string(strategies.torn_unit) +
                     ": the atomic unit is whole 512-byte sectors (512, 4096, ...)");
}

constexpr const char* kCheckText = R"(Check the crash states of RECORDING with contents no earlier state had, by
the fast path: the state built in place over the recording, the journal
replayed as e2fsck replays it, and every fact marked before its crash point
read back from the filesystem; then e2fsck -fn on the structure the
recovered state leaves (each recovered metadata image once; --structure
none: the facts alone). An XFS or btrfs recording (the filesystem is
told from the recording), or an ext4 with what the fast path does not read
(fast commits), is checked by the kernel alone: each state mounted, its
facts read back, then xfs_repair -n, btrfs check --readonly or e2fsck -fn.

At most --max-states unique states are checked (default 20000 by the fast
path, 1000 by the kernel alone; 0: every one): where there are more, a
sample spread over every crash point and strategy. The states are checked
in rounds of growing density (every 64th first), so that --time-limit,
--max-findings or SIGINT and SIGTERM, which end the check early, leave a
sample spread over the whole recording. Failing states are grouped by
signature (what broke and how, whatever the files); the first
--per-signature of each are described in full: the writes they kept and
dropped, their cause minimized, and the kernel's verdict.

Prints the states per strategy first, then the failing states (the first
10), their signatures, what was not checked and how to check it, and last
one line: N states checked in S s (R states/s), F failing. Exit status 1
when a state fails or the check was interrupted. --out DIR writes
results.json and the report (table.md, states.png, states.svg).

A shard: --shard I/N checks the states taken in blocks of 64 whose block
number is I modulo N. Without it, a Slurm job array's task
(SLURM_ARRAY_TASK_ID, SLURM_ARRAY_TASK_MIN, SLURM_ARRAY_TASK_COUNT) or a
Kubernetes Indexed Job's (JOB_COMPLETION_INDEX, with NVJ_SHARD_COUNT set to
its completions) checks its own; `nvj crash merge` joins their results.
)";

// What check and run share: the points, the strategies, the shard, the
// report, the ground truth.
void check_options(Command& c, CheckArgs& check) {
  enumeration_options(c, check.every, check.no_marks, check.no_persistence, check.options.strategies);
  c.add("--shard", check.shard, "check slice I of N (default: from Slurm or Kubernetes, else all)").value_name("I/N");
  c.add("--out", check.out, "write DIR/results.json (run: and DIR/recording.nvjrec)").value_name("DIR");
  c.choice("--verify", check.verify, {"none", "failing", "sample", "all"},
           "which states the ground truth checks too (default: sample)");
  c.count("--sample", check.sample, 1, ~std::uint64_t{0}, "with --verify sample, one passing state in N (default 64)")
      .value_name("N");
  c.add("--scratch", check.scratch, "the ground truth's files (default: a new folder in $TMPDIR)").value_name("DIR");
  c.count("--per-signature", check.per_signature, 0, ~std::uint64_t{0},
          "describe, minimize and verify the first N failing states of each signature (default 3)")
      .value_name("N");
  c.count("--max-states", check.max_states, 0, ~std::uint64_t{0},
          "check at most N unique states, a sample over every point and strategy (default 20000, by the kernel "
          "alone 1000; 0: all)")
      .value_name("N")
      .on_given([&check] { check.max_states_given = true; });
  c.wall_duration("--time-limit", check.time_limit_ns, "stop checking new states after TIME (90s, 10m; default: none)");
  c.count("--max-findings", check.max_findings, 0, ~std::uint64_t{0},
          "stop once a signature has N failing states (default 0: never)")
      .value_name("N");
  c.choice("--structure", check.structure, {"every", "none"},
           "e2fsck on the structure of every state the fast path reads, each recovered metadata image once "
           "(default: every); none: the facts alone");
  c.add("--recovery-kernel", check.recovery_kernel,
        "the fast path recovers journals as Linux RELEASE does (6.1.0, 6.12.118; default: this machine's kernel)")
      .value_name("RELEASE");
}

constexpr const char* kRunText = R"(The crash lab in one command, on this host: start nbdkit with the plugin
recording from its start (defaults: data=256M journal=32M data-model=hdd
journal-model=nvram, ext4 with its journal on the NVRAM export; PARAM=VALUE
replaces or adds, PARAM= drops a default; with fs-journal=internal[:SIZE]
the journal is inside the data export and journal= goes), attach the
exports, mount the filesystem (data=ordered unless --mount-options say
otherwise: data=journal, nobarrier), run COMMAND with the filesystem's root
as its working directory, NVJ_MNT naming it and NVJ_CONTROL the server's
control socket (so that nvj writers, nvj synctest and nvj mark post their
facts there), unmount, take it all down, then check the crash states as nvj
crash check does. Needs root. Exit status 1 when a state fails or the
workload does. SIGINT or SIGTERM stops the workload (or the check: its
report says what was checked) and takes everything down; a run that was
killed outright is cleared by the next one.

With --fs xfs, an XFS made here with its log on the NVRAM export (defaults
data=512M journal=64M fs=none; --log internal: inside the data export),
with --fs btrfs a btrfs on the data export (fs=none): recorded from just
after mkfs and checked by the kernel alone (mount, then xfs_repair -n or
btrfs check --readonly on every state); with --vm too, the filesystem made
here before the guest boots on it.

With --vm, a QEMU guest (as nvj vm) mounts the filesystem at /mnt and runs
COMMAND there, with the guest's programs (busybox, and nvj-workload:
synctest, writers, mark); its facts reach the server over a serial line.
)";

constexpr const char* kRecordText = R"(Record a workload for the crash lab and stop there: nvj crash run without
the check, the same options for the server, the filesystem and the
workload. OUT/recording.nvjrec is what nvj crash check RECORDING checks
(give it the same --mount-options). Exit status 1 when the workload fails.
)";

constexpr const char* kReportText = R"(Write the report of a check again from its results.json (the file, or the
folder holding it): table.md (the states per strategy, the crash points with
failing states, each failing state with what broke and its minimized cause),
states.dat and the plot of the states by verdict at each crash point
(states.png, states.svg), into --out DIR or beside results.json. A shard's
results are refused: nvj crash merge joins the shards and writes the report.
)";

// What run and record share: the server, the filesystem, the workload.
void workload_options(Command& c, RunArgs& run) {
  c.add("PARAM", run.parameters, "the plugin's PARAM=VALUE, over the defaults").value_name("PARAM=VALUE");
  c.add("--mount-options", run.mount_options, "the workload's mount options (journal_path= or logdev= is added)")
      .value_name("OPTIONS");
  c.choice("--fs", run.filesystem, {"ext4", "xfs", "btrfs"}, "the filesystem (default ext4, the server's)");
  c.choice("--log", run.log, {"external", "internal"},
           "with --fs xfs, its log on the journal export (default) or inside the data export");
  c.flag("--keep-run", run.keep, "leave the run folder (the server's log) behind");
  c.flag("--vm", run.vm, "run the workload in a QEMU guest booted on the exports (as nvj vm)");
  c.add("--kernel", run.kernel,
        "with --vm, the guest's kernel: a bzImage, a folder, debian:SUITE or debian:PACKAGE[=VERSION] (default: the "
        "distribution's); several, comma-separated, run it on each (OUT/VERSION, OUT/kernels.md)")
      .value_name("KERNEL[,KERNEL]...");
  c.choice("--transport", run.transport, {"scsi", "nbd"},
           "with --vm, how the guest reaches the exports: scsi (default: QEMU's NBD client) or nbd (the guest "
           "kernel's, as nvj vm --transport)");
  c.take_words_after_dashes(run.workload);
}

constexpr const char* kImageText = R"(Write the exports of one crash state of RECORDING (the state whose ordinal is
N, as nvj crash check numbers them with the same options) to DIR/data.img
and DIR/journal.img, sparse, as the power cut left them: the journal not
replayed. With several --state, each state's go to DIR/N/. Mount them through loop devices or run e2fsck on them to see for
yourself what a check said.
)";

constexpr const char* kFramesText = R"(List what each export saw around one crash state of RECORDING (--state N,
as nvj crash check numbers them with the same options) or one crash point
(--point P), frame by frame in the recording's order, as replay-log lists
a log: every write, zero and trim with FUA, its acknowledgement (durable or
not), every flush and its completion, every mark; for each change what the
state made of it (durable before the power went, kept, dropped, torn after
so many bytes, or sent after the cut), and what its blocks are where the
lab can tell: ext4's metadata by kind and the data of which file, the jbd2
journal's descriptor, logged copies (of which home block), revoke and
commit blocks, XFS's blocks by their magic numbers.
)";

constexpr const char* kExploreText = R"(Explore by itself: run every workload of a bound (seq-1: one core operation
and a persistence call; seq-2: two; seq-3: three) over a fixed file set
(directories A, B, A/C; files A/foo, A/bar, B/foo, B/bar, A/C/foo), each on
the same freshly made filesystem (the server's kept base, restored between
workloads), with the facts its persistence calls promise (each from a rule
citing its source: docs/explore-rules.md) posted as it goes, and check every
crash state of each workload's recording as nvj crash check does (the fast
path; the kernel confirms the failing states). OUT/explore.json holds every
workload, its states and its failures with the rule each broke;
OUT/workloads/N/ its recording, results.json and check log. --list prints
the workloads (ordinal and name) without running them. Ends with one line:
W workloads, S states checked in T s, F findings. With --vm a QEMU guest
runs the workloads, one boot for all of them, once per --kernel: OUT/VERSION/
holds each kernel's exploration, OUT/kernels.md and kernels.json set the
kernels side by side (the workloads whose verdict differs first); the
recordings are checked on this host. Exit status 0 when no state fails, 1
when one does, 2 for bad input.
)";

constexpr const char* kMergeText = R"(Join the results.json of every shard of one `nvj crash check` (each given as
the file or the folder holding it) into OUT/results.json, the same bytes one
unsharded check writes. Refuses shards of another recording or options, a
shard given twice or missing, and a state not checked exactly once. Exit
status 1 when a state fails. Given the explore.json of an exploration's
shards (nvj crash explore --shard), it joins them into OUT/explore.json and
OUT/findings.md, the workloads' folders copied beside them.
)";

constexpr const char* kImportText = R"(Turn a dm-log-writes log (the kernel's dm-log-writes target, QEMU's
blklogwrites driver, what fstests' replay-log replays) into
OUT/recording.nvjrec, which nvj crash check, states and image read: each
write becomes a change acknowledged as it was logged (FUA: durable then),
each FLUSH entry a flush that completes there and covers every write before
it, each discard a trim, each mark a mark with its label (a label that is a
fact, "fact file PATH ...", stays a fact). The entries up to the mark
--start-mark (default: "mkfs", fstests' name for the state after mkfs, when
every log has it) are the starting contents, at no crash point; before the
first entry the device holds --base, the image it was logged from (QEMU's
blklogwrites logs an image as it is), or else zeroes.

What a log cannot tell: when a write was acknowledged (dm-log-writes logs a
write once it completes, and holds it until the flush that covers it: a
write not yet covered by a flush when the log ended is not in it, and the
states it would have made are not checked), and, with two logs
(--journal-log), the order between the devices: then the crash points are
only the marks both logs share and the end. The export's size is --size,
else what the filesystem in the log says (ext4, XFS, btrfs), else what the
log writes, in whole MiB; --base's size when given.
)";

constexpr const char* kExportText = R"(Write a recording's exports as dm-log-writes logs, marks included, for
replay-log and anything else that reads the format: the starting contents
as writes, a flush and the mark --base-mark (default "mkfs"), then each
write, zero (as zeroes) and trim (a discard) once acknowledged, in the
order dm-log-writes logs them (one acknowledged while a flush was in flight
after that flush), every completed flush, every mark, and the mark
"dm-log-writes-end". Changes never acknowledged are left out, as the kernel
logs only what completed. With one export (--export NAME, or a recording
of one) --out is the log's file; otherwise a folder with NAME.log for each.
)";

}  // namespace

CommandRun declare_crash(Command& app) {
  auto a = std::make_shared<StatesArgs>();
  auto check = std::make_shared<CheckArgs>();
  auto merge = std::make_shared<MergeArgs>();
  auto run = std::make_shared<RunArgs>();
  auto record = std::make_shared<RunArgs>();
  record->record_only = true;
  auto report = std::make_shared<ReportArgs>();
  auto image = std::make_shared<ImageArgs>();
  auto explore = std::make_shared<ExploreArgs>();
  auto import = std::make_shared<ImportArgs>();
  auto exported = std::make_shared<ExportArgs>();
  app.describe(kCrashText);
  app.require_subcommands(1, 1);
  Command states = app.subcommand("states", "count a recording's crash points and states per strategy");
  states.describe(kStatesText);
  states.add("RECORDING", a->recording, "the recording (record=FILE)").value_name("FILE");
  enumeration_options(states, a->every, a->no_marks, a->no_persistence, a->strategies);
  states.flag("--json", a->json, "one JSON object");

  Command checks = app.subcommand("check", "check a recording's crash states against its facts");
  checks.describe(kCheckText);
  checks.add("RECORDING", check->recording, "the recording (record=FILE)").value_name("FILE");
  check_options(checks, *check);
  checks.add("--mount-options", check->mount_options,
             "the ground truth's mount options (journal_path= or logdev= is added)")
      .value_name("OPTIONS");

  Command runs = app.subcommand("run", "record a workload on this host and check its crash states");
  runs.describe(kRunText);
  check_options(runs, run->check);
  workload_options(runs, *run);

  Command records = app.subcommand("record", "record a workload for a later check");
  records.describe(kRecordText);
  records.add("--out", record->check.out, "the folder for recording.nvjrec (required)").value_name("DIR");
  workload_options(records, *record);

  Command reports = app.subcommand("report", "write a check's report again from its results.json");
  reports.describe(kReportText);
  reports.add("RESULTS", report->results, "results.json, or its folder").value_name("PATH");
  reports.add("--out", report->out, "the folder for the report (default: beside results.json)").value_name("DIR");

  Command images = app.subcommand("image", "write one crash state's exports to image files");
  images.describe(kImageText);
  images.add("RECORDING", image->check.recording, "the recording (record=FILE)").value_name("FILE");
  enumeration_options(images, image->check.every, image->check.no_marks, image->check.no_persistence,
                      image->check.options.strategies);
  images.add("--state", image->states, "the state's ordinal (results.json's \"ordinal\"); repeatable")
      .value_name("N")
      .one_value_per_use();
  images.add("--out", image->out, "the folder for EXPORT.img, or N/EXPORT.img for several (required)")
      .value_name("DIR");

  auto frames = std::make_shared<FramesArgs>();
  Command frame_list = app.subcommand("frames", "list what the exports saw around a crash state, block by block");
  frame_list.describe(kFramesText);
  frame_list.add("RECORDING", frames->check.recording, "the recording (record=FILE)").value_name("FILE");
  enumeration_options(frame_list, frames->check.every, frames->check.no_marks, frames->check.no_persistence,
                      frames->check.options.strategies);
  frame_list.add("--state", frames->state, "the state's ordinal (results.json's \"ordinal\")").value_name("N");
  frame_list.add("--point", frames->point, "or a crash point's number, with no state (nvj crash states counts them)")
      .value_name("P");
  frame_list.count("--before", frames->before, 0, ~std::uint64_t{0},
                   "frames before the oldest volatile change (default 20)").value_name("N");
  frame_list.count("--after", frames->after, 0, ~std::uint64_t{0}, "frames after the crash point (default 10)")
      .value_name("N");
  frame_list.flag("--all", frames->all, "every frame of the recording");
  frame_list.flag("--json", frames->json, "one JSON object");

  Command explores = app.subcommand("explore", "generate workloads and check every crash state of each");
  explores.describe(kExploreText);
  explores.add("PARAM", explore->parameters, "the plugin's PARAM=VALUE, over the defaults").value_name("PARAM=VALUE");
  explores.choice("--fs", explore->filesystem, {"ext4", "xfs", "btrfs"}, "the filesystem (default ext4)");
  explores.add("--bound", explore->bound, "seq-1 (default), seq-2 or seq-3: core operations per workload")
      .value_name("BOUND");
  explores.add("--ops", explore->ops, "the core operations to draw from, comma-separated (default: all)")
      .value_name("LIST");
  explores.add("--mount-options", explore->mount_options, "the workloads' mount options (journal_path= is added)")
      .value_name("OPTIONS");
  explores.add("--shard", explore->shard, "this run's share of the workloads, I/N (default: Slurm's or "
               "Kubernetes' index, else all)").value_name("I/N");
  explores.add("--workload", explore->workload, "only these workloads (their ordinals in --list, comma-separated)")
      .value_name("N[,N]...");
  explores.flag("--list", explore->list, "print the workloads, one per line, and run none");
  explores.flag("--no-minimize", explore->no_minimize,
                "leave failing workloads of seq-2 and seq-3 as they are (default: their core steps reduced while "
                "they fail the same way)");
  explores.count("--max-states", explore->max_states, 0, std::uint64_t{1} << 40,
                 "unique crash states checked per workload at most, a sample over its crash points (default: "
                 "every one on ext4, 40 on XFS and btrfs, whose states the kernel checks one by one)")
      .value_name("N")
      .on_given([explore] { explore->max_states_given = true; });
  explores.choice("--structure", explore->structure, {"every", "none"},
                  "ext4: e2fsck on the structure of every state, each recovered metadata image once (default: every); "
                  "none: the facts alone");
  explores.flag("--vm", explore->vm,
                "run the workloads in a QEMU guest, one boot for all of them (as nvj vm), once per kernel");
  explores.add("--kernel", explore->kernels,
               "with --vm, the guest's kernel: a bzImage, a folder, debian:SUITE or debian:PACKAGE[=VERSION]; several, "
               "comma-separated or repeated, for a table by kernel (default: the distribution's)")
      .value_name("KERNEL[,KERNEL]...");
  explores.flag("--keep-run", explore->keep, "leave the run folder (the server's log) behind");
  explores.add("--out", explore->out, "the folder for explore.json and each workload's check (required to run)")
      .value_name("DIR");

  Command imports = app.subcommand("import", "turn a dm-log-writes log into a recording");
  imports.describe(kImportText);
  imports.add("LOG", import->log, "the data device's log").value_name("FILE");
  imports.add("--out", import->out, "the folder for recording.nvjrec (required)").value_name("DIR");
  imports.add("--journal-log", import->journal_log, "the journal device's log, logged on its own").value_name("FILE");
  imports.size("--size", import->size, 512, std::uint64_t{1} << 50,
               "the data export's size (default: the filesystem's, else what the log writes)")
      .value_name("SIZE");
  imports.size("--journal-size", import->journal_size, 512, std::uint64_t{1} << 50,
               "the journal export's size (default: as --size)")
      .value_name("SIZE");
  imports.add("--start-mark", import->start_mark,
              "the entries up to this mark are the starting contents (default: mkfs, when the log has it)")
      .value_name("LABEL");
  imports.add("--base", import->base,
              "the data device's image when logging began (QEMU's blklogwrites logs an image as it is; default: "
              "zeroes)")
      .value_name("FILE");
  imports.add("--journal-base", import->journal_base, "the journal device's image when logging began")
      .value_name("FILE");
  imports.flag("--no-start-mark", import->no_start_mark, "every entry is a change, from a device of zeroes");
  imports.flag("--past-count", import->past_count,
               "also read whole entries past the super block's count (a log whose writer stopped early)");

  Command exports = app.subcommand("export", "write a recording's exports as dm-log-writes logs");
  exports.describe(kExportText);
  exports.add("RECORDING", exported->recording, "the recording (record=FILE)").value_name("FILE");
  exports.choice("--format", exported->format, {"dm-log-writes"}, "the log's format (required)");
  exports.add("--out", exported->out, "the log's file, or with several exports their folder (required)")
      .value_name("PATH");
  exports.add("--export", exported->only, "only this export (data, journal)").value_name("NAME");
  exports.count("--sector-size", exported->sector_size, 512u, 1u << 20,
                "the log's sector size, a power of two: its unit of addresses (default 512)")
      .value_name("BYTES");
  exports.add("--base-mark", exported->base_mark, "the mark after the starting contents (default mkfs)")
      .value_name("LABEL");

  Command merges = app.subcommand("merge", "join the results of a check's shards");
  merges.describe(kMergeText);
  merges.add("RESULTS", merge->inputs, "each shard's results.json, or its folder").value_name("PATH");
  merges.add("--out", merge->out, "the folder for the merged results.json (required)").value_name("DIR");

  return [a, check, merge, run, record, report, image, explore, import, exported, frames, checks, merges, runs, records,
          reports, images, explores, imports, exports, frame_list] {
    if (explores.parsed()) return crash_explore_main(*explore);
    if (frame_list.parsed()) {
      check_torn_unit(frames->check.options.strategies, "nvj crash frames");
      return crash_frames_main(*frames);
    }
    if (imports.parsed()) {
      if (import->log.empty()) throw UsageError("nvj crash import: which LOG?");
      return crash_import_main(*import);
    }
    if (exports.parsed()) return crash_export_main(*exported);
    check_torn_unit(a->strategies, "nvj crash states");
    check_torn_unit(check->options.strategies, "nvj crash check");
    check_torn_unit(run->check.options.strategies, "nvj crash run");
    check_torn_unit(image->check.options.strategies, "nvj crash image");
    if (runs.parsed()) return crash_run_main(*run);
    if (records.parsed()) return crash_run_main(*record);
    if (reports.parsed()) {
      if (report->results.empty()) throw UsageError("nvj crash report: which RESULTS?");
      return crash_report_main(*report);
    }
    if (images.parsed()) {
      if (image->check.recording.empty()) throw UsageError("nvj crash image: which RECORDING?");
      if (image->out.empty()) throw UsageError("nvj crash image: --out DIR is required");
      if (image->states.empty()) throw UsageError("nvj crash image: which --state N?");
      return crash_image_main(*image);
    }
    if (checks.parsed()) {
      if (check->recording.empty()) throw UsageError("nvj crash check: which RECORDING?");
      return crash_check_main(*check);
    }
    if (merges.parsed()) {
      if (merge->inputs.empty()) throw UsageError("nvj crash merge: which RESULTS?");
      if (merge->out.empty()) throw UsageError("nvj crash merge: --out DIR is required");
      if (is_explore_output(merge->inputs.front())) return explore_merge_main(merge->inputs, merge->out);
      return crash_merge_main(*merge);
    }
    if (a->recording.empty()) throw UsageError("nvj crash states: which RECORDING?");
    return states_main(*a);
  };
}

}  // namespace nvj::cli
