#include "tools/nvj/crash/check_command.h"

#include <stdlib.h>

#include <algorithm>
#include <charconv>
#include <set>
#include <cerrno>
#include <cstring>
#include <memory>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iterator>
#include <fstream>
#include <optional>
#include <sstream>
#include <stdexcept>

#include "common/command_line.h"
#include "common/json.h"
#include "fscore/fs_signature.h"
#include "crashlab/crash_cause.h"
#include "tools/nvj/crash/check_results.h"
#include "tools/nvj/crash/crash_report.h"
#include "tools/nvj/crash/ground_truth.h"
#include "tools/nvj/crash/progress.h"
#include "tools/nvj/crash/shard.h"
#include "tools/nvj/experiment/report.h"
#include "tools/nvj/host/mapped_file.h"

namespace nvj::cli {

namespace {

using crashlab::CheckedState;
using crashlab::Strategy;

// At most this many failing states are described on stdout (all are in
// results.json).
constexpr std::uint64_t kShownFailures = 10;

void print_counts(const crashlab::Enumeration& e, const Shard& shard, std::uint64_t mine) {
  std::printf("%-8s %12s %12s\n", "strategy", "states", "unique");
  for (std::size_t s = 0; s < crashlab::kStrategies; ++s)
    std::printf("%-8s %12llu %12llu\n", crashlab::to_string(static_cast<Strategy>(s)),
                static_cast<unsigned long long>(e.by_strategy[s].states),
                static_cast<unsigned long long>(e.by_strategy[s].unique));
  std::printf("%-8s %12llu %12llu\n", "total", static_cast<unsigned long long>(e.states),
              static_cast<unsigned long long>(e.unique));
  if (shard.count > 1)
    std::printf("shard %llu of %llu (from %s): %llu of the %llu unique states\n",
                static_cast<unsigned long long>(shard.index), static_cast<unsigned long long>(shard.count),
                shard.source.c_str(), static_cast<unsigned long long>(mine),
                static_cast<unsigned long long>(e.unique));
  std::fflush(stdout);
}

// "  path: expected X, found Y" for each violation, and the error.
void describe_verdict(const Json& v, const char* indent) {
  if (v.contains("error")) std::printf("%s%s\n", indent, v["error"].get<std::string>().c_str());
  if (v.contains("violations"))
    for (const Json& f : v["violations"])
      std::printf("%s%s: expected %s, found %s\n", indent, f["path"].get<std::string>().c_str(),
                  f["expected"].get<std::string>().c_str(), f["found"].get<std::string>().c_str());
}

void describe_failure(const Json& s) {
  std::string where = "point " + std::to_string(s["point"].get<std::uint64_t>()) + " (frame " +
                      std::to_string(s["frame"].get<std::uint64_t>()) + ")";
  if (!s["last_mark"].is_null()) where += ", after mark '" + s["last_mark"].get<std::string>() + "'";
  const std::uint64_t volatile_changes = s["volatile"].get<std::uint64_t>();
  const bool torn = s.contains("torn");
  std::printf("%s: state %llu at %s, %s, %llu of %llu volatile changes dropped%s\n",
              s["verdict"].get<std::string>().c_str(), static_cast<unsigned long long>(s["ordinal"].get<std::uint64_t>()),
              where.c_str(), s["strategy"].get<std::string>().c_str(),
              static_cast<unsigned long long>(volatile_changes - s["kept"].get<std::uint64_t>() - (torn ? 1 : 0)),
              static_cast<unsigned long long>(volatile_changes),
              torn ? (", one torn: " + std::to_string(s["torn"]["kept_bytes"].get<std::uint64_t>()) + " of the " +
                      std::to_string(s["torn"]["length"].get<std::uint64_t>()) + " bytes at " +
                      std::to_string(s["torn"]["offset"].get<std::uint64_t>()) + " of " +
                      s["torn"]["export"].get<std::string>() + " kept")
                         .c_str()
                   : "");
  describe_verdict(s, "  ");
  if (s.contains("cause")) {
    const Json& k = s["cause"];
    if (!k["found"].get<bool>()) {
      std::printf("  cause: it fails with every volatile change kept: not a lost write\n");
    } else {
      std::string regions;
      for (const Json& d : k["dropped"])
        regions += (regions.empty() ? "" : ", ") + std::string(d["acknowledged"].get<bool>() ? "an acknowledged" : "a") +
                   " write of " + std::to_string(d["length"].get<std::uint64_t>()) + " bytes at " +
                   std::to_string(d["offset"].get<std::uint64_t>()) + " of " + d["export"].get<std::string>() + " (" +
                   d["region"].get<std::string>() + ")";
      const std::string torn_part =
          k.contains("torn") ? "the torn write (" + k["torn"].get<std::string>() + ")" : std::string();
      if (k["dropped"].empty())
        std::printf("  cause: %s alone breaks it%s\n", torn_part.c_str(),
                    k.contains("ground_truth") ? (" (the kernel: " + k["ground_truth"].get<std::string>() + ")").c_str() : "");
      else
        std::printf("  cause: dropping %zu write%s%s breaks it%s: %s%s\n", k["dropped"].size(),
                    k["dropped"].size() == 1 ? "" : "s", torn_part.empty() ? "" : (" with " + torn_part).c_str(),
                    k["minimal"].get<bool>() ? "" : " (not minimal: the budget ran out)", regions.c_str(),
                    k.contains("ground_truth") ? (" (the kernel: " + k["ground_truth"].get<std::string>() + ")").c_str() : "");
    }
  }
  if (s.contains("ground_truth")) {
    const Json& g = s["ground_truth"];
    std::printf("  ground truth: %s%s\n", g["verdict"].get<std::string>().c_str(),
                s["agree"].get<bool>() ? "" : " (the fast path disagrees)");
    describe_verdict(g, "    ");
  }
}

void summary_line(std::uint64_t checked, double seconds, std::uint64_t failing) {
  std::printf("%llu states checked in %.1f s (%.0f states/s), %llu failing\n", static_cast<unsigned long long>(checked),
              seconds, seconds > 0 ? static_cast<double>(checked) / seconds : 0.0,
              static_cast<unsigned long long>(failing));
}

void write_results(const std::string& dir, const Json& results) {
  write_report_file(dir, "results.json", to_json_text(results, 1) + "\n");
}

std::optional<std::string> from_env(const char* name) {
  const char* v = std::getenv(name);
  return v == nullptr ? std::nullopt : std::optional<std::string>(v);
}

// A folder for the ground truth's files: the one given, or a new one in
// $TMPDIR (or /tmp), removed at the end.
class Scratch {
 public:
  explicit Scratch(const std::string& given) : path_(given) {}
  ~Scratch() {
    std::error_code ignored;
    if (made_) std::filesystem::remove_all(path_, ignored);
  }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  const std::filesystem::path& path() {
    if (path_.empty()) {
      const char* tmp = std::getenv("TMPDIR");
      std::string pattern = std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/nvj-crash-XXXXXX";
      if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp " + pattern + ": " + std::strerror(errno));
      path_ = pattern;
      made_ = true;
    }
    return path_;
  }

 private:
  std::filesystem::path path_;
  bool made_ = false;
};

// Whether a state gets the ground truth too: every failing one (but with
// none), every one with all, and with sample one passing state in `sample`,
// chosen by its ordinal and the seed (the same on every shard).
bool wants_ground_truth(const std::string& verify, std::uint64_t sample, std::uint64_t seed, bool passed,
                        std::uint64_t ordinal) {
  if (verify == "none") return false;
  if (verify == "all" || !passed) return true;
  if (verify != "sample") return false;
  std::uint64_t x = (ordinal + 1) * 0x9E3779B97F4A7C15u ^ seed;
  x ^= x >> 31;
  x *= 0xBF58476D1CE4E5B9u;
  x ^= x >> 29;
  return x % sample == 0;
}

// The ground truth's loop devices and files, made at the first state that
// needs them. Where it cannot run, the default (sample) goes on without it,
// saying so; an explicit --verify is an error.
std::unique_ptr<KernelCheck> start_kernel_check(Scratch& scratch, crashlab::CrashImage& image,
                                                const CheckArgs& a, const std::string& filesystem, std::string& verify) {
  try {
    return std::make_unique<KernelCheck>(scratch.path(), image, filesystem, a.mount_options);
  } catch (const std::exception& e) {
    if (!a.verify.empty() || filesystem != "ext4")
      throw std::runtime_error("--verify " + verify + (a.verify.empty() ? " (" + filesystem + ")" : "") + ": " + e.what());
    std::fprintf(stderr, "nvj crash check: no ground truth (%s); the fast path alone decides\n", e.what());
    verify = "none";
    return nullptr;
  }
}

// The tries a cause's minimization may spend: the fast path's are cheap,
// the kernel's (a mount and the checker) some 50 ms each.
constexpr std::uint64_t kFastMinimizeBudget = 400;
constexpr std::uint64_t kKernelMinimizeBudget = 60;

// A failing state's minimized cause, and the kernel's verdict with only the
// cause's writes dropped (the torn one torn) where the ground truth runs.
Json confirmed_cause(const crashlab::CauseInputs& in, crashlab::StateContext& c, KernelCheck* kernel,
                     std::uint64_t budget) {
  const crashlab::CrashCause cause = crashlab::minimize_cause(in, c.point, c.state, budget);
  Json j = cause_json(in.index, cause);
  if (cause.found && kernel) {
    c.image.set_state(crashlab::kept_without(c.point, c.state, cause.dropped), c.state.torn);
    j["ground_truth"] = crashlab::to_string(kernel->check(c.data, in.journal, c.oracle).verdict);
  }
  return j;
}

// The filesystem on the recording's data export as the recording starts:
// ext4 is checked by the fast path; XFS and btrfs, which it does not read,
// by the kernel alone.
fscore::FsSignature recorded_filesystem(const crashlab::RecordingIndex& index, const std::string& recording) {
  crashlab::CrashImage base(index);
  const fscore::FsSignature s = identify_filesystem(base.exported(base.find("data").value_or(0)));
  if (s.kind == fscore::FsKind::unknown)
    throw std::runtime_error(recording + ": no ext4, XFS or btrfs on the data export where the recording starts "
                                         "(start recording after mkfs)");
  return s;
}

}  // namespace

int crash_check_main(const CheckArgs& a) {
  const Shard shard = a.shard.empty() ? shard_from_environment(from_env) : parse_shard(a.shard);
  crashlab::CheckOptions options = a.options;
  options.points.marks = !a.no_marks;
  options.points.persistence = !a.no_persistence;
  options.points.every = a.every;
  options.shard = shard.index;
  options.shards = shard.count;
  std::string verify = a.verify.empty() ? "sample" : a.verify;

  const MappedFile file(a.recording);
  const crashlab::RecordingIndex index(file.bytes());
  const fscore::FsSignature signature = recorded_filesystem(index, a.recording);
  const std::string filesystem = fscore::to_string(signature.kind);
  const bool fast = signature.kind == fscore::FsKind::ext4;  // else the kernel alone decides
  if (!fast && !a.verify.empty() && a.verify != "all")
    throw UsageError("nvj crash check: --verify " + a.verify + ": the fast path reads ext4 only, so the kernel checks "
                     "every state of this " + filesystem + " recording (--verify all)");
  if (!fast) verify = "all";
  const crashlab::CrashChecker checker(index, options);
  const crashlab::Enumeration e = checker.count();
  const std::uint64_t mine = checker.share();
  std::printf("%s: %s, %zu crash points, %zu marks, checking the unique states %s\n", a.recording.c_str(),
              filesystem.c_str(), checker.points().size(), index.marks().size(),
              fast ? "by the fast path" : "by the kernel (mount, then the filesystem's checker)");
  if (!fast && a.minimize > 0)
    std::printf("(causes are minimized with the kernel as the test: at most %llu tries each, the fast path reading "
                "ext4 only)\n",
                static_cast<unsigned long long>(kKernelMinimizeBudget));
  print_counts(e, shard, mine);

  Scratch scratch(a.scratch);
  std::unique_ptr<KernelCheck> kernel;
  Progress progress(mine);
  Json states = Json::array();
  std::uint64_t shown = 0, minimized = 0;
  crashlab::ContentCache cache;
  const crashlab::Enumeration enumeration = checker.walk([&](crashlab::StateContext& c) {
    CheckedState checked;
    checked.ordinal = c.ordinal;
    checked.state = &c.state;
    checked.point = &c.point;
    Json j;
    bool failing = false;  // by either check
    if (!fast) {  // the kernel's verdict is the state's
      if (!kernel) kernel = start_kernel_check(scratch, c.image, a, filesystem, verify);
      const std::optional<std::uint8_t> log = signature.external_log ? c.journal : std::nullopt;
      checked.verdict = kernel->check(c.data, log, c.oracle);
      j = state_json(index, checked);
      failing = checked.verdict.verdict != crashlab::Verdict::pass;
      if (checked.verdict.verdict == crashlab::Verdict::fail && minimized < a.minimize) {
        ++minimized;
        crashlab::CauseInputs in{index, c.image, c.data, log, c.oracle, nullptr, options.now, {}};
        in.judge = [&] { return kernel->check(c.data, log, c.oracle); };
        j["cause"] = confirmed_cause(in, c, kernel.get(), kKernelMinimizeBudget);
      }
    } else {
      auto& fs = c.image.exported(c.data);
      auto* journal = c.journal ? &c.image.exported(*c.journal) : nullptr;
      checked.verdict = crashlab::check_ext4_state(fs, fs, journal, journal, c.oracle, options.now, &cache);
      j = state_json(index, checked);
      const bool passed = checked.verdict.verdict == crashlab::Verdict::pass;
      if (wants_ground_truth(verify, a.sample, options.strategies.seed, passed, c.ordinal)) {
        if (!kernel) kernel = start_kernel_check(scratch, c.image, a, filesystem, verify);
        if (kernel) {
          c.image.set_state(c.state.kept, c.state.torn);  // the state as it was, before the fast path's replay
          const crashlab::StateVerdict truth = kernel->check(c.data, c.journal, c.oracle);
          j["ground_truth"] = verdict_json(truth);
          j["agree"] = verdicts_agree(checked.verdict, truth);
        }
      }
      if (checked.verdict.verdict == crashlab::Verdict::fail && minimized < a.minimize) {
        ++minimized;
        const crashlab::CauseInputs in{index, c.image, c.data, c.journal, c.oracle, &cache, options.now, {}};
        j["cause"] = confirmed_cause(in, c, kernel.get(), kFastMinimizeBudget);
      }
      failing = !passed || (j.contains("ground_truth") && j["ground_truth"]["verdict"] != "pass");
    }
    if (failing && shown++ < kShownFailures) {
      progress.finish();
      describe_failure(j);
    }
    states.push_back(std::move(j));
    progress.update(states.size(), shown);
  });
  progress.finish();
  kernel.reset();
  const double seconds = progress.elapsed();
  Json results =
      results_json(a.recording, file.bytes().size(), filesystem, index, options, enumeration, shard, a.minimize,
                   std::move(states));
  const VerdictCount c = count_verdicts(results);
  if (c.failing > kShownFailures)
    std::printf("(%llu more failing states%s)\n", static_cast<unsigned long long>(c.failing - kShownFailures),
                a.out.empty() ? ": --out DIR writes them all" : " in results.json");
  if (c.verified > 0)
    std::printf("ground truth (kernel mount, then e2fsck -fn): %llu states, %llu failing, %llu disagreeing with the fast path\n",
                static_cast<unsigned long long>(c.verified), static_cast<unsigned long long>(c.verified_failing),
                static_cast<unsigned long long>(c.disagree));
  if (!a.out.empty()) {
    if (results.contains("shard")) results["shard"]["seconds"] = json_round(seconds, 3);  // merge drops it
    write_results(a.out, results);
    if (!results.contains("shard")) write_crash_report(results, a.out);  // a shard's waits for the merge
  }
  summary_line(c.checked, seconds, c.failing);
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
  crashlab::CheckOptions options = a.check.options;
  options.points.marks = !a.check.no_marks;
  options.points.persistence = !a.check.no_persistence;
  options.points.every = a.check.every;
  const MappedFile file(a.check.recording);
  const crashlab::RecordingIndex index(file.bytes());
  const crashlab::CrashChecker checker(index, options);
  const std::uint64_t unique = checker.count().unique;
  for (const std::uint64_t n : wanted)
    if (n >= unique)
      throw std::runtime_error("no state " + std::to_string(n) + ": with these options the recording has " +
                               std::to_string(unique) + " unique states (0 to " + std::to_string(unique - 1) + ")");
  checker.walk([&](crashlab::StateContext& c) {
    if (wanted.count(c.ordinal) == 0) return;
    std::filesystem::path dir = a.out;
    if (wanted.size() > 1) dir /= std::to_string(c.ordinal);
    std::filesystem::create_directories(dir);
    for (std::size_t d = 0; d < c.image.count(); ++d) {
      const std::string name = index.exports()[d].name;
      const auto path = dir / (name + ".img");
      write_state_file(c.image, static_cast<std::uint8_t>(d), path);
      std::printf("%s: export %s of state %llu\n", path.c_str(), name.c_str(),
                  static_cast<unsigned long long>(c.ordinal));
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
  const Json merged = merge_results(shards, names);
  write_results(a.out, merged);
  write_crash_report(merged, a.out);
  const VerdictCount c = count_verdicts(merged);
  std::printf("merged %zu shards into %s\n", shards.size(), (std::filesystem::path(a.out) / "results.json").c_str());
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
