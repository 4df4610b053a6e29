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

constexpr const char* kMergeText = R"(Join the results.json of every shard of one `nvj crash check` (each given as
the file or the folder holding it) into OUT/results.json, the same bytes one
unsharded check writes. Refuses shards of another recording or options, a
shard given twice or missing, and a state not checked exactly once. Exit
status 1 when a state fails. Given the explore.json of an exploration's
shards (nvj crash explore --shard), it joins them into OUT/explore.json and
OUT/findings.md, the workloads' folders copied beside them.
)";

struct MergeArgs {
  std::vector<std::string> inputs;  // shards' results.json, or folders holding one
  std::string out;                  // the folder for the merged results.json
};

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
