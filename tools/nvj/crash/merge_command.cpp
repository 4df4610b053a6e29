// SPDX-License-Identifier: BSD-3-Clause
// nvj crash merge: the results.json of a check's shards joined into the
// one an unsharded check writes (results_json.h), with its report; the
// explore.json of an exploration's shards handed to the explorer's merge
// (tools/nvj/explore/explore_report.h).
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "common/json.h"
#include "tools/nvj/crash/console_report.h"
#include "tools/nvj/crash/crash_report.h"
#include "tools/nvj/crash/results_json.h"
#include "tools/nvj/crash/subcommands.h"
#include "tools/nvj/explore/explore_report.h"

namespace nvj::cli {
namespace {

namespace fs = std::filesystem;

constexpr const char* kMergeText = R"(Join the results.json of every shard of one `nvj crash check` (each given as
the file or the folder holding it) into OUT/results.json, the same bytes one
unsharded check writes. Refuses shards of another recording or options, a
shard given twice or missing, and a state not checked exactly once. Shards
checked with --during-recovery 0 join their recoveries, each recovery's
folder copied into OUT. Exit status 1 when a state or a recovery's state
fails. Given the explore.json of an exploration's
shards (nvj crash explore --shard), it joins them into OUT/explore.json and
OUT/findings.md, the workloads' folders copied beside them.
)";

struct MergeArgs {
  std::vector<std::string> inputs;  // shards' results.json, or folders holding one
  std::string out;                  // the folder for the merged results.json
};

// Each recovery's folder (OUT/recovery/N: its recording, results.json and
// check.log, named by the entry's "recording") from its shard's folder
// into OUT, where the merged results.json names it.
void copy_recoveries(const Json& merged, const std::vector<std::string>& results_files, const std::string& out) {
  if (!merged.contains("during_recovery")) return;
  for (const Json& state : merged.at("during_recovery").at("states")) {
    if (!state.contains("recording")) continue;  // not recovered: its error says why
    const fs::path folder = fs::path(state.at("recording").get<std::string>()).parent_path();
    for (const std::string& file : results_files) {
      const fs::path from = fs::path(file).parent_path() / folder;
      const fs::path to = fs::path(out) / folder;
      if (!fs::exists(from) || fs::weakly_canonical(from) == fs::weakly_canonical(to)) continue;
      fs::create_directories(to);
      fs::copy(from, to, fs::copy_options::recursive | fs::copy_options::overwrite_existing);
    }
  }
}

int crash_merge_main(const MergeArgs& a) {
  std::vector<Json> shards;
  std::vector<std::string> names;
  for (const std::string& input : a.inputs) {
    shards.push_back(read_results(input));
    names.push_back(std::filesystem::is_directory(input) ? input + "/results.json" : input);
  }
  const Results merged = merge_results(shards, names);
  copy_recoveries(merged.document, names, a.out);
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
  const Json recovery = merged.document.value("during_recovery", Json::object());
  const std::uint64_t recovery_failing =
      recovery.value("failing", std::uint64_t{0}) + recovery.value("disagree", std::uint64_t{0});
  if (merged.document.contains("during_recovery"))
    std::printf("during recovery: %llu states recovered, %llu crash states of their recoveries checked, %llu failing\n",
                static_cast<unsigned long long>(recovery.at("recovered").get<std::uint64_t>()),
                static_cast<unsigned long long>(recovery.at("checked").get<std::uint64_t>()),
                static_cast<unsigned long long>(recovery.at("failing").get<std::uint64_t>()));
  return c.failing == 0 && c.disagree == 0 && recovery_failing == 0 ? 0 : 1;
}

}  // namespace

CrashSubcommand declare_crash_merge(Command& crash) {
  auto merge = std::make_shared<MergeArgs>();
  Command merges = crash.subcommand("merge", "join the results of a check's shards");
  merges.describe(kMergeText);
  merges.add("RESULTS", merge->inputs, "each shard's results.json, or its folder").value_name("PATH");
  merges.add("--out", merge->out, "the folder for the merged results.json (required)").value_name("DIR");
  return {merges, [merge] {
            if (merge->inputs.empty()) throw UsageError("nvj crash merge: which RESULTS?");
            if (merge->out.empty()) throw UsageError("nvj crash merge: --out DIR is required");
            if (is_explore_output(merge->inputs.front())) return explore_merge_main(merge->inputs, merge->out);
            return crash_merge_main(*merge);
          }};
}

}  // namespace nvj::cli
