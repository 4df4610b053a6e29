#include "tools/nvj/crash/check_command.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <stdexcept>

#include "common/json.h"
#include "tools/nvj/crash/check_results.h"
#include "tools/nvj/crash/progress.h"
#include "tools/nvj/crash/shard.h"
#include "tools/nvj/experiment/report.h"
#include "tools/nvj/host/mapped_file.h"

namespace nvj::cli {

namespace {

using fscore::record::CheckedState;
using fscore::record::Strategy;

// At most this many failing states are described on stdout (all are in
// results.json).
constexpr std::uint64_t kShownFailures = 10;

void print_counts(const fscore::record::Enumeration& e, const Shard& shard, std::uint64_t mine) {
  std::printf("%-8s %12s %12s\n", "strategy", "states", "unique");
  for (std::size_t s = 0; s < fscore::record::kStrategies; ++s)
    std::printf("%-8s %12llu %12llu\n", fscore::record::to_string(static_cast<Strategy>(s)),
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

void describe_failure(const Json& s) {
  std::string where = "point " + std::to_string(s["point"].get<std::uint64_t>()) + " (frame " +
                      std::to_string(s["frame"].get<std::uint64_t>()) + ")";
  if (!s["last_mark"].is_null()) where += ", after mark '" + s["last_mark"].get<std::string>() + "'";
  std::printf("%s: state %llu at %s, %s, %zu of %llu volatile changes dropped\n",
              s["verdict"].get<std::string>().c_str(), static_cast<unsigned long long>(s["ordinal"].get<std::uint64_t>()),
              where.c_str(), s["strategy"].get<std::string>().c_str(), s["dropped_changes"].size(),
              static_cast<unsigned long long>(s["volatile"].get<std::uint64_t>()));
  if (s.contains("error")) std::printf("  %s\n", s["error"].get<std::string>().c_str());
  for (const Json& v : s["violations"])
    std::printf("  %s: expected %s, found %s\n", v["path"].get<std::string>().c_str(),
                v["expected"].get<std::string>().c_str(), v["found"].get<std::string>().c_str());
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

}  // namespace

int crash_check_main(const CheckArgs& a) {
  const Shard shard = a.shard.empty() ? shard_from_environment(from_env) : parse_shard(a.shard);
  fscore::record::CheckOptions options = a.options;
  options.points.marks = !a.no_marks;
  options.points.persistence = !a.no_persistence;
  options.points.every = a.every;
  options.shard = shard.index;
  options.shards = shard.count;

  const MappedFile file(a.recording);
  const fscore::record::RecordingIndex index(file.bytes());
  const fscore::record::CrashChecker checker(index, options);
  const fscore::record::Enumeration e = checker.count();
  const std::uint64_t mine = e.unique / shard.count + (shard.index < e.unique % shard.count ? 1 : 0);
  std::printf("%s: %zu crash points, %zu marks, checking the unique states by the fast path\n", a.recording.c_str(),
              checker.points().size(), index.marks().size());
  print_counts(e, shard, mine);

  Progress progress(mine);
  Json states = Json::array();
  std::uint64_t failing = 0;
  const fscore::record::CheckTotals totals = checker.run([&](const CheckedState& c) {
    states.push_back(state_json(index, c));
    if (c.verdict.verdict != fscore::record::Verdict::pass) {
      if (failing < kShownFailures) {
        progress.finish();
        describe_failure(states.back());
      }
      ++failing;
    }
    progress.update(states.size(), failing);
  });
  progress.finish();
  const double seconds = progress.elapsed();
  if (failing > kShownFailures)
    std::printf("(%llu more failing states in results.json)\n",
                static_cast<unsigned long long>(failing - kShownFailures));
  if (!a.out.empty()) {
    Json results =
        results_json(a.recording, file.bytes().size(), index, options, totals.enumeration, shard, std::move(states));
    if (results.contains("shard")) results["shard"]["seconds"] = json_round(seconds, 3);  // merge drops it
    write_results(a.out, results);
  }
  summary_line(totals.checked, seconds, totals.failing());
  return totals.failing() == 0 ? 0 : 1;
}

int crash_merge_main(const MergeArgs& a) {
  std::vector<Json> shards;
  std::vector<std::string> names;
  for (const std::string& input : a.inputs) {
    std::filesystem::path p = input;
    if (std::filesystem::is_directory(p)) p /= "results.json";
    std::ifstream in(p);
    if (!in) throw std::runtime_error(p.string() + ": cannot be read");
    std::stringstream text;
    text << in.rdbuf();
    shards.push_back(parse_json(text.str(), p.string()));
    names.push_back(p.string());
  }
  const Json merged = merge_results(shards, names);
  write_results(a.out, merged);
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
  summary_line(c.checked, slowest, c.failing());
  return c.failing() == 0 ? 0 : 1;
}

}  // namespace nvj::cli
