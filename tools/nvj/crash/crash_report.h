// SPDX-License-Identifier: BSD-3-Clause
// The crash lab's report beside results.json (results_json.h): table.md
// (what was checked, the verdicts by strategy and by crash point, and each
// failing state with the facts it breaks and its minimized cause) and a
// plot of the states by verdict at each crash point along the run
// (states.png and states.svg, drawn by gnuplot from states.dat).
#pragma once

#include <filesystem>
#include <string>

#include "tools/nvj/crash/results_json.h"

namespace nvj::cli {

// Writes table.md, states.dat and the plots into `dir`. Throws naming what
// is wrong (a results.json it cannot read, gnuplot failing).
// `plot` false: table.md and states.dat only, no gnuplot run (the
// explorer's passing workloads: nvj crash report draws them again).
void write_crash_report(const Results& results, const std::filesystem::path& dir, bool plot = true);

// nvj crash report: the report of a results.json written again (by a
// newer nvj, or into another folder). A shard's results are refused: the
// report is of every state, after nvj crash merge.
struct ReportArgs {
  std::string results;  // results.json, or the folder holding it
  std::string out;      // "": beside results.json
};
int crash_report_main(const ReportArgs& args);

}  // namespace nvj::cli
