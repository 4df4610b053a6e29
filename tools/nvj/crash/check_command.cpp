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
#include "crashlab/crash_image.h"
#include "crashlab/state_check.h"
#include "fscore/fs_signature.h"
#include "tools/nvj/crash/check_output.h"
#include "tools/nvj/crash/check_results.h"
#include "tools/nvj/crash/check_session.h"
#include "tools/nvj/crash/crash_report.h"
#include "tools/nvj/crash/ground_truth.h"
#include "tools/nvj/crash/shard.h"
#include "tools/nvj/experiment/report.h"
#include "tools/nvj/host/interrupt.h"
#include "tools/nvj/host/mapped_file.h"
#include "tools/nvj/host/run_folder.h"

namespace nvj::cli {

namespace {

// At most this many failing states are described on stdout (all are in
// results.json).
constexpr std::uint64_t kShownFailures = 10;

void write_results(const std::string& dir, const Results& results) {
  std::filesystem::create_directories(dir);
  const std::filesystem::path path = std::filesystem::path(dir) / "results.json";
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  write_results_text(out, results.document, results.states);
  out.close();
  if (!out) throw std::runtime_error("cannot write " + path.string());
}

// A folder for the ground truth's files: the one given, or a new one in
// $TMPDIR (or /tmp), named in the run folder (so that a run killed leaves
// nothing the next one does not clear) and removed at the end.
class Scratch {
 public:
  Scratch(const std::string& given, const RunFolder& run) : path_(given), run_(run) {}
  ~Scratch() {
    std::error_code ignored;
    if (made_) std::filesystem::remove_all(path_, ignored);
  }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  std::filesystem::path path() {
    if (path_.empty()) {
      const char* tmp = std::getenv("TMPDIR");
      std::string pattern = std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/nvj-crash-" +
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
  crashlab::CheckOptions options = enumeration_of(a);
  options.shard = shard.index;
  options.shards = shard.count;
  // The fast path recovers journals as the kernel that mounts the states
  // (the ground truth's, this machine's) does, unless told another.
  std::string release = a.recovery_kernel;
  if (struct utsname host {}; release.empty() && ::uname(&host) == 0) release = host.release;
  if (!a.recovery_kernel.empty() && (release.empty() || release[0] < '0' || release[0] > '9' || release.find('.') == std::string::npos))
    throw UsageError("nvj crash check: --recovery-kernel " + release + ": expected a Linux release (6.1.0, 6.12.118+deb13-amd64)");
  options.recovery = fscore::jbd2::recovery_rules_of(release);

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
  Scratch scratch(a.scratch, folder);
  catch_interrupts();
  SessionOptions session;
  session.fast = fast;
  session.verify_given = !a.verify.empty();
  session.verify = a.verify.empty() ? "sample" : a.verify;
  session.sample = a.sample;
  session.per_signature = a.per_signature;
  session.max_findings = a.max_findings;
  session.time_limit = static_cast<double>(a.time_limit_ns) / 1e9;
  session.filesystem = filesystem;
  session.external_log = recorded.signature.external_log;
  session.mount_options = a.mount_options;
  session.scratch = [&scratch] { return scratch.path(); };
  session.structure = a.structure == "every";
  SessionResult run = run_check_session(index, checker, session);

  const CheckLimits limits{run.verify,        a.sample,           options.max_states,
                           a.per_signature,   a.max_findings,     session.time_limit,
                           run.structure ? "every" : "none"};
  Results results = results_of(a.recording, file.bytes().size(), filesystem, !fast, index, checker, shard, limits,
                               run.progress, std::move(run.states));
  Json& document = results.document;
  if (!a.made_by.is_null()) document["recording"]["made_by"] = a.made_by;
  document["final_state"] = run.final_state;
  if (run.final_state.at("verdict") != "pass") {
    std::printf("the final state (every write kept, as a clean unmount leaves it) is %s: the facts are wrong (the "
                "oracle's error, or a workload that said what it did not do), and the crash states judged by them say "
                "nothing of crashes:\n",
                run.final_state.at("verdict").get<std::string>().c_str());
    if (run.final_state.contains("error")) std::printf("  %s\n", run.final_state["error"].get<std::string>().c_str());
    if (run.final_state.contains("violations"))
      for (const Json& v : run.final_state["violations"]) std::printf("  %s\n", violation_text(v).c_str());
  }
  const VerdictCount c = count_verdicts(results.states);
  show_failures(results.states, c.failing, a.out);
  print_signatures(document);
  if (c.verified > 0 && fast)
    std::printf("ground truth (kernel mount, then e2fsck -fn): %llu states, %llu failing, %llu disagreeing with the fast path\n",
                static_cast<unsigned long long>(c.verified), static_cast<unsigned long long>(c.verified_failing),
                static_cast<unsigned long long>(c.disagree));
  if (run.structure)
    std::printf("structure (e2fsck -fn on each recovered metadata image): %llu images for %llu states\n",
                static_cast<unsigned long long>(run.progress.structure_images),
                static_cast<unsigned long long>(run.progress.structure_images + run.progress.structure_shared));
  print_coverage(document, a.recording);
  if (!a.out.empty()) {
    if (document.contains("shard")) document["shard"]["seconds"] = json_round(run.seconds, 3);  // merge drops it
    write_results(a.out, results);
    if (!document.contains("shard")) write_crash_report(results, a.out);  // a shard's waits for the merge
  }
  summary_line(c.checked, run.seconds, c.failing);
  if (run.progress.stopped == "interrupted") {
    std::printf("interrupted (%s): what was checked is above%s\n", interrupt_signal() == SIGINT ? "SIGINT" : "SIGTERM",
                a.out.empty() ? "" : " and in results.json");
    return 1;
  }
  return c.failing == 0 && c.disagree == 0 ? 0 : 1;
}

int crash_image_main(const ImageArgs& a) {
  std::set<std::uint64_t> wanted;
  for (const std::string& text : a.states) {
    std::uint64_t n = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
    if (ec != std::errc() || end != text.data() + text.size() || text.empty())
      throw UsageError("nvj crash image: --state " + text + ": expected a state's ordinal, a whole number");
    wanted.insert(n);
  }
  const MappedFile file(a.check.recording);
  const crashlab::RecordingIndex index(file.bytes());
  const crashlab::CrashChecker checker(index, enumeration_of(a.check));
  std::vector<crashlab::SelectedState> found;
  try {
    found = checker.find(wanted);
  } catch (const std::out_of_range& e) {
    throw std::runtime_error(e.what());
  }
  checker.walk_states(found, [&](crashlab::StateContext& c) {
    std::filesystem::path dir = a.out;
    if (wanted.size() > 1) dir /= std::to_string(c.selected.ordinal);
    std::filesystem::create_directories(dir);
    for (std::size_t d = 0; d < c.image.count(); ++d) {
      const std::string name = index.exports()[d].name;
      const auto path = dir / (name + ".img");
      write_state_file(c.image, static_cast<std::uint8_t>(d), path);
      std::printf("%s: export %s of state %llu\n", path.c_str(), name.c_str(),
                  static_cast<unsigned long long>(c.selected.ordinal));
    }
    const auto& p = c.point;
    const std::string mark = p.last_mark == crashlab::kNoMark ? "" : ", after mark '" + index.marks()[p.last_mark].label + "'";
    std::printf("  crash point %zu (after frame %llu%s), strategy %s, %zu of %zu volatile changes kept%s\n",
                c.state.point, static_cast<unsigned long long>(p.sequence), mark.c_str(),
                crashlab::to_string(c.state.strategy), c.state.kept.size(), p.volatile_changes.size(),
                c.state.torn ? (", one more torn after " + std::to_string(c.state.torn->bytes) + " bytes").c_str() : "");
  });
  std::printf("the journal is not replayed: mount it (ext4 replays it) or run e2fsck on it, as after a power cut\n");
  return 0;
}

int crash_merge_main(const MergeArgs& a) {
  std::vector<Json> shards;
  std::vector<std::string> names;
  for (const std::string& input : a.inputs) {
    shards.push_back(read_results(input));
    names.push_back(std::filesystem::is_directory(input) ? input + "/results.json" : input);
  }
  const Results merged = merge_results(shards, names);
  write_results(a.out, merged);
  write_crash_report(merged, a.out);
  const VerdictCount c = count_verdicts(merged.states);
  std::printf("merged %zu shards into %s\n", shards.size(), (std::filesystem::path(a.out) / "results.json").c_str());
  print_signatures(merged.document);
  print_coverage(merged.document, merged.document.at("recording").at("path").get<std::string>());
  // Shards run side by side: the run took as long as the slowest.
  double slowest = 0, summed = 0;
  for (const Json& s : shards) {
    const double t = s["shard"].value("seconds", 0.0);
    slowest = std::max(slowest, t);
    summed += t;
  }
  std::printf("(the slowest shard took %.1f s, the shards %.1f s in all)\n", slowest, summed);
  summary_line(c.checked, slowest, c.failing);
  return c.failing == 0 && c.disagree == 0 ? 0 : 1;
}

}  // namespace nvj::cli
