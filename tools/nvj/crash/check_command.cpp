// SPDX-License-Identifier: BSD-3-Clause
#include "tools/nvj/crash/check_command.h"

#include <stdlib.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>

#include "common/command_line.h"
#include "common/json.h"
#include "crashlab/judge/fast_path.h"
#include "crashlab/states/crash_image.h"
#include "fscore/fs_signature.h"
#include "tools/nvj/crash/console_report.h"
#include "tools/nvj/crash/crash_report.h"
#include "tools/nvj/crash/ground_truth.h"
#include "tools/nvj/crash/judge_session.h"
#include "tools/nvj/crash/recovery_check.h"
#include "tools/nvj/crash/results_json.h"
#include "tools/nvj/crash/shard.h"
#include "tools/nvj/crash/state_options.h"
#include "tools/nvj/crash/subcommands.h"
#include "tools/nvj/experiment/report.h"
#include "tools/nvj/host/files/scratch_parent.h"
#include "tools/nvj/host/files/mapped_file.h"
#include "tools/nvj/host/processes/interrupt.h"
#include "tools/nvj/host/processes/run_folder.h"

namespace nvj::cli {

namespace {

// At most this many failing states are described on stdout (all are in
// results.json).
constexpr std::uint64_t kShownFailures = 10;

// A folder for the ground truth's files: the one given, or a new one in
// `parent` (empty: $TMPDIR, or /tmp), named in the run folder (so that a run killed leaves
// nothing the next one does not clear) and removed at the end.
class Scratch {
 public:
  Scratch(const std::string& given, std::string parent, const RunFolder& run)
      : path_(given), parent_(std::move(parent)), run_(run) {}
  ~Scratch() {
    std::error_code ignored;
    if (made_) std::filesystem::remove_all(path_, ignored);
  }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  std::filesystem::path path() {
    if (path_.empty()) {
      const std::string parent = !parent_.empty() ? parent_ : default_scratch_parent();
      std::string pattern = parent + "/nvj-crash-" +
                            std::to_string(::getpid()) + "-XXXXXX";
      if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp " + pattern + ": " + std::strerror(errno));
      path_ = pattern;
      made_ = true;
      run_.note_scratch(path_);
    }
    return path_;
  }

 private:
  std::filesystem::path path_;
  std::string parent_;
  const RunFolder& run_;
  bool made_ = false;
};

// The filesystem on the recording's data export as the recording starts,
// and why the fast path does not read it (empty: it does): ext4 is checked
// by the fast path; XFS, btrfs and an ext4 with what it does not read (fast
// commits), by the kernel alone.
struct Recorded {
  fscore::FsSignature signature;
  std::string refused;
};
Recorded recorded_filesystem(const crashlab::RecordingIndex& index, const std::string& recording) {
  crashlab::CrashImage base(index);
  auto& data = base.exported(base.find("data").value_or(0));
  Recorded r{identify_filesystem(data), ""};
  if (r.signature.kind == fscore::FsKind::unknown)
    throw UsageError(recording + ": no ext4, XFS or btrfs on the data export where the recording starts "
                                 "(start recording after mkfs)");
  if (r.signature.kind == fscore::FsKind::ext4)
    if (const auto why = crashlab::fast_path_refuses(data)) r.refused = *why;
  return r;
}

// Failing states for stdout: the detailed ones first (the first of each
// signature), then the others, in ordinal order; at most kShownFailures.
void show_failures(const std::vector<StateRecord>& states, std::uint64_t failing, const std::string& out) {
  std::uint64_t shown = 0;
  for (const bool detailed : {true, false})
    for (const StateRecord& s : states) {
      if (shown == kShownFailures) break;
      if (!s.failing() || s.detailed != detailed) continue;
      describe_failure(s.entry());
      ++shown;
    }
  if (failing > shown)
    std::printf("(%llu more failing states%s)\n", static_cast<unsigned long long>(failing - shown),
                out.empty() ? ": --out DIR writes them all" : " in results.json");
}

// The fast path recovers journals as the kernel that mounts the states
// (the ground truth's, this machine's) does, unless told another.
fscore::jbd2::RecoveryRules recovery_rules(const CheckArgs& a) {
  std::string release = a.recovery_kernel;
  if (struct utsname host {}; release.empty() && ::uname(&host) == 0) release = host.release;
  if (!a.recovery_kernel.empty() && (release.empty() || release[0] < '0' || release[0] > '9' || release.find('.') == std::string::npos))
    throw UsageError("nvj crash check: --recovery-kernel " + release + ": expected a Linux release (6.1.0, 6.12.118+deb13-amd64)");
  return fscore::jbd2::recovery_rules_of(release);
}

SessionOptions session_options(const CheckArgs& a, bool fast, const Recorded& recorded, Scratch& scratch) {
  SessionOptions session;
  session.fast = fast;
  session.verify_given = !a.verify.empty();
  session.verify = a.verify.empty() ? "sample" : a.verify;
  session.sample = a.sample;
  session.per_signature = a.per_signature;
  session.max_findings = a.max_findings;
  session.time_limit = static_cast<double>(a.time_limit_ns) / 1e9;
  session.filesystem = fscore::to_string(recorded.signature.kind);
  session.external_log = recorded.signature.external_log;
  session.mount_options = a.mount_options;
  session.scratch = [&scratch] { return scratch.path(); };
  session.structure = a.structure == "every";
  return session;
}

// A final state that does not pass says the facts are wrong, not the
// filesystem.
void print_final_state(const Json& final_state) {
  if (final_state.at("verdict") == "pass") return;
  std::printf("the final state (every write kept, as a clean unmount leaves it) is %s: the facts are wrong (the "
              "oracle's error, or a workload that said what it did not do), and the crash states judged by them say "
              "nothing of crashes:\n",
              final_state.at("verdict").get<std::string>().c_str());
  if (final_state.contains("error")) std::printf("  %s\n", final_state["error"].get<std::string>().c_str());
  if (final_state.contains("violations"))
    for (const Json& v : final_state["violations"]) std::printf("  %s\n", violation_text(v).c_str());
}

// What the ground truth and e2fsck on the structure did.
void print_checkers(const VerdictCount& c, bool fast, const SessionResult& run) {
  if (c.verified > 0 && fast)
    std::printf("ground truth (kernel mount, then e2fsck -fn): %llu states, %llu failing, %llu disagreeing with the fast path\n",
                static_cast<unsigned long long>(c.verified), static_cast<unsigned long long>(c.verified_failing),
                static_cast<unsigned long long>(c.disagree));
  if (run.structure)
    std::printf("structure (e2fsck -fn on each recovered metadata image): %llu images for %llu states\n",
                static_cast<unsigned long long>(run.progress.structure_images),
                static_cast<unsigned long long>(run.progress.structure_images + run.progress.structure_shared));
}

}  // namespace

crashlab::CheckOptions enumeration_of(const CheckArgs& a) {
  crashlab::CheckOptions options = a.options;
  options.points.marks = !a.no_marks;
  options.points.persistence = !a.no_persistence;
  options.points.every = a.every;
  return options;
}

int crash_check_main(const CheckArgs& a) {
  const Shard shard = shard_given_or_from_environment(a.shard);
  // N of the passing states, spread over all of them, is a choice no shard
  // can make alone; every passing state (0) is each shard's own.
  if (a.during_recovery_given && a.during_recovery > 0 && shard.count > 1)
    throw UsageError("nvj crash check: --during-recovery " + std::to_string(a.during_recovery) + " in shard " +
                     std::to_string(shard.index) + " of " + std::to_string(shard.count) +
                     ": N states spread over all the passing ones cannot be picked by one shard; give 0 (every "
                     "passing state, each shard its own) or check unsharded");
  crashlab::CheckOptions options = enumeration_of(a);
  options.shard = shard.index;
  options.shards = shard.count;
  options.recovery = recovery_rules(a);

  const MappedFile file(a.recording);
  const crashlab::RecordingIndex index(file.bytes());
  const Recorded recorded = recorded_filesystem(index, a.recording);
  const std::string filesystem = fscore::to_string(recorded.signature.kind);
  const bool fast = recorded.signature.kind == fscore::FsKind::ext4 && recorded.refused.empty();
  if (!fast && !a.verify.empty() && a.verify != "all")
    throw UsageError("nvj crash check: --verify " + a.verify + ": " +
                     (recorded.refused.empty() ? "the fast path reads ext4 only" : "the fast path does not read this ext4") +
                     ", so the kernel checks every state of this " + filesystem + " recording (--verify all)");
  options.max_states = a.max_states_given ? a.max_states : fast ? kFastBudget : kKernelBudget;
  const crashlab::CrashChecker checker(index, options);
  std::printf("%s: %s, %zu crash points, %zu marks, checking the unique states %s\n", a.recording.c_str(),
              filesystem.c_str(), checker.points().size(), index.marks().size(),
              fast ? "by the fast path" : "by the kernel (mount, then the filesystem's checker)");
  if (!recorded.refused.empty())
    std::printf("(the fast path does not read this ext4: %s; the kernel checks every state)\n", recorded.refused.c_str());
  if (!fast && a.per_signature > 0)
    std::printf("(causes are minimized with the kernel as the test: at most 60 tries each)\n");
  print_counts(checker, shard);

  std::optional<RunFolder> own_folder;
  if (a.run_folder == nullptr) own_folder.emplace("crash");
  const RunFolder& folder = a.run_folder != nullptr ? *a.run_folder : *own_folder;
  Scratch scratch(a.scratch, a.scratch_parent, folder);
  catch_interrupts();
  const SessionOptions session = session_options(a, fast, recorded, scratch);
  SessionResult run = run_judge_session(index, checker, session);

  const CheckLimits limits{run.verify,        a.sample,           options.max_states,
                           a.per_signature,   a.max_findings,     session.time_limit,
                           run.structure ? "every" : "none"};
  Results results = results_of(a.recording, file.bytes().size(), filesystem, !fast, index, checker, shard, limits,
                               run.progress, std::move(run.states));
  Json& document = results.document;
  if (!a.made_by.is_null()) document["recording"]["made_by"] = a.made_by;
  document["final_state"] = run.final_state;
  print_final_state(run.final_state);
  const VerdictCount c = count_verdicts(results.states);
  show_failures(results.states, c.failing, a.out);
  print_signatures(document);
  print_checkers(c, fast, run);
  print_coverage(document, a.recording);
  std::uint64_t recovery_failing = 0;
  if (a.during_recovery_given && run.progress.stopped != "interrupted") {
    const std::filesystem::path out = a.out.empty() ? folder.path() / "recovery" : std::filesystem::path(a.out) / "recovery";
    const RecoveryContext context{a, index, checker, filesystem, out, folder.path()};
    document["during_recovery"] = check_during_recovery(context, recovery_picks(results.states, a.during_recovery));
    recovery_failing = document["during_recovery"]["failing"].get<std::uint64_t>() +
                       document["during_recovery"]["disagree"].get<std::uint64_t>();
  }
  if (!a.out.empty()) {
    if (document.contains("shard")) document["shard"]["seconds"] = json_round(run.seconds, 3);  // merge drops it
    write_results(a.out, results);
    if (!document.contains("shard"))  // a shard's waits for the merge
      write_crash_report(results, a.out, a.plots_when_passing || c.failing > 0 || recovery_failing > 0);
  }
  summary_line(c.checked, run.seconds, c.failing);
  if (run.progress.stopped == "interrupted") {
    std::printf("interrupted (%s): what was checked is above%s\n", interrupt_signal() == SIGINT ? "SIGINT" : "SIGTERM",
                a.out.empty() ? "" : " and in results.json");
    return 1;
  }
  return c.failing == 0 && c.disagree == 0 && recovery_failing == 0 ? 0 : 1;
}

void recording_options(Command& c, CheckArgs& check) {
  c.add("RECORDING", check.recording, "the recording (record=FILE)").value_name("FILE");
  enumeration_options(c, check.every, check.no_marks, check.no_persistence, check.options.strategies);
}

void check_options(Command& c, CheckArgs& check) {
  enumeration_options(c, check.every, check.no_marks, check.no_persistence, check.options.strategies);
  c.add("--shard", check.shard, "check slice I of N (default: from Slurm or Kubernetes, else all)").value_name("I/N");
  c.add("--out", check.out, "write DIR/results.json (run: and DIR/recording.nvjrec)").value_name("DIR");
  c.choice("--verify", check.verify, {"none", "failing", "sample", "all"},
           "which states the ground truth checks too (default: sample)");
  c.count("--sample", check.sample, 1, ~std::uint64_t{0}, "with --verify sample, one passing state in N (default 64)")
      .value_name("N");
  c.add("--scratch", check.scratch,
        "the ground truth's and the structure check's files (default: a new folder in $TMPDIR, else in /dev/shm, "
        "else in /tmp)")
      .value_name("DIR");
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
  c.count("--during-recovery", check.during_recovery, 0, ~std::uint64_t{0},
          "recover N of the passing states again (0: every one) under a recording, and check every crash state of "
          "each recovery against the state's facts (as root)")
      .value_name("N")
      .on_given([&check] { check.during_recovery_given = true; });
  c.add("--recovery-kernel", check.recovery_kernel,
        "the fast path recovers journals as Linux RELEASE does (6.1.0, 6.12.118; default: this machine's kernel)")
      .value_name("RELEASE");
}

namespace {

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

}  // namespace

CrashSubcommand declare_crash_check(Command& crash) {
  auto check = std::make_shared<CheckArgs>();
  Command checks = crash.subcommand("check", "check a recording's crash states against its facts");
  checks.describe(kCheckText);
  checks.add("RECORDING", check->recording, "the recording (record=FILE)").value_name("FILE");
  check_options(checks, *check);
  checks.add("--mount-options", check->mount_options,
             "the ground truth's mount options (journal_path= or logdev= is added)")
      .value_name("OPTIONS");
  return {checks, [check] {
            check_torn_unit(check->options.strategies, "nvj crash check");
            if (check->recording.empty()) throw UsageError("nvj crash check: which RECORDING?");
            return crash_check_main(*check);
          }};
}

}  // namespace nvj::cli
