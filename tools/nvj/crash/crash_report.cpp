// SPDX-License-Identifier: BSD-3-Clause
#include "tools/nvj/crash/crash_report.h"

#include <cstdio>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>

#include "crashlab/judge/fast_path.h"
#include "tools/nvj/crash/results_json.h"
#include "tools/nvj/crash/subcommands.h"
#include "tools/nvj/experiment/report.h"

namespace nvj::cli {

namespace {

constexpr std::size_t kListed = 50;  // failing states described in table.md

struct PointRow {
  std::uint64_t frame = 0;
  std::string mark;
  std::uint64_t pass = 0, fail = 0, needs_fsck = 0, unreadable = 0;
};

// A failing state's facts and cause in a cell: at most 120 characters, so
// a row stays readable (results.json has every word).
std::string short_cell(const std::string& text) {
  return markdown_cell(text.size() > 120 ? text.substr(0, 117) + "..." : text);
}

std::string state_verdict(const Json& s) {
  const std::string fast = s.at("verdict").get<std::string>();
  if (!s.contains("ground_truth")) return fast;
  const std::string truth = s["ground_truth"].at("verdict").get<std::string>();
  return fast == truth ? fast : fast + " (kernel: " + truth + ")";
}

// (Strings are appended to, never built as "literal" + std::string: at -O3
// GCC 12 warns wrongly of overlapping copies there, -Wrestrict.)
std::string cause_text(const Json& s) {
  if (!s.contains("cause")) return "";
  const Json& k = s["cause"];
  if (!k.at("found").get<bool>()) return "fails with every volatile write kept: not a lost write";
  std::string torn;
  if (k.contains("torn")) torn.append("the torn write (").append(k["torn"].get<std::string>()).append(")");
  std::string kernel;
  if (k.contains("ground_truth")) kernel.append(", kernel: ").append(k["ground_truth"].get<std::string>());
  if (k.at("dropped").empty()) return torn + " alone" + kernel;
  std::map<std::string, int> regions;
  std::string writes;
  for (const Json& d : k.at("dropped")) {
    ++regions[d.at("export").get<std::string>() + " " + d.at("region").get<std::string>()];
    if (!writes.empty()) writes.append(", ");
    writes.append(std::to_string(d.at("length").get<std::uint64_t>())).append(" B at ");
    writes.append(std::to_string(d.at("offset").get<std::uint64_t>()));
    if (d.at("acknowledged").get<bool>()) writes.append(" (acked)");
  }
  std::string out = "drop ";
  out.append(std::to_string(k.at("dropped").size()));
  if (!torn.empty()) out.append(" with ").append(torn);
  out.append(":");
  for (const auto& [r, n] : regions) out.append(" ").append(std::to_string(n)).append(" ").append(r);
  out.append(" [").append(writes).append("]");
  if (!k.at("minimal").get<bool>()) out.append(", not minimal");
  return out + kernel;
}

// What was checked and what not, and how to check the rest.
std::string coverage_text(const Json& results) {
  const Json& c = results.at("coverage");
  const std::uint64_t unique = c.at("unique").get<std::uint64_t>(), taken = c.at("taken").get<std::uint64_t>();
  const std::uint64_t checked = c.at("checked").get<std::uint64_t>();
  const std::string path = results.at("recording").at("path").get<std::string>();
  std::string md;
  if (taken < unique)
    md += "A sample: " + std::to_string(taken) + " of the " + std::to_string(unique) +
          " unique states taken (--max-states " + std::to_string(results.at("options").at("max_states").get<std::uint64_t>()) +
          "), spread over every crash point and strategy; checked states at " +
          std::to_string(c.at("points").at("checked").get<std::uint64_t>()) + " of the " +
          std::to_string(c.at("points").at("with_states").get<std::uint64_t>()) + " crash points that have any. ";
  if (!c.at("stopped").is_null())
    md += "The check stopped early (" + c["stopped"].get<std::string>() + ") after " +
          std::to_string(c.at("rounds").get<unsigned>()) + " of its 7 rounds of growing density: " +
          std::to_string(taken - checked) + " of the states taken were not checked. ";
  if (checked < unique)
    md += "**" + std::to_string(unique - checked) + " unique states were not checked**: `nvj crash check " + path +
          " --max-states 0` checks every one, or the same with `--shard I/N` on N machines (deploy/README.md).\n\n";
  else
    md += "Every unique state was checked.\n\n";
  return md;
}

}  // namespace

namespace {

// The opening: what was checked and how, the verdicts, then the coverage
// and the states per strategy.
std::string summary_section(const Json& results, const VerdictCount& c) {
  const Json& e = results.at("enumeration");
  const std::string filesystem = results.at("recording").at("filesystem").get<std::string>();
  const bool fast = filesystem == "ext4";
  std::string md = "# Crash states of " + results.at("recording").at("path").get<std::string>() + " (" + filesystem +
                   ")\n\n";
  md += std::to_string(c.checked) + " unique states checked " +
        (fast ? std::string("by the fast path")
              : "by the kernel (a mount, then " + std::string(filesystem == "xfs" ? "xfs_repair -n" : "btrfs check --readonly") +
                    ")") +
        " (of " + std::to_string(e.at("states").get<std::uint64_t>()) + " enumerated";
  md += e.at("merged_by_contents").get<bool>() ? ", identical contents checked once)" : ", none merged)";
  md += ": " + std::to_string(c.pass) + " pass, " + std::to_string(c.fail) + " fail, " + std::to_string(c.needs_fsck) +
        " need fsck, " + std::to_string(c.unreadable) + " unreadable.";
  if (fast)
    md += " The ground truth (kernel mount, e2fsck -fn) checked " + std::to_string(c.verified) + ", " +
          std::to_string(c.verified_failing) + " failing, disagreeing with the fast path on " +
          std::to_string(c.disagree) + ".";
  md += " **" + std::to_string(c.failing) + " failing.**\n\n";
  md += coverage_text(results);
  const Json& by = results.at("coverage").at("strategies");
  md += "| strategy | states | unique | taken | checked |\n|---|---:|---:|---:|---:|\n";
  for (const auto& [name, n] : e.at("strategies").items())
    md += "| " + name + " | " + std::to_string(n.at("states").get<std::uint64_t>()) + " | " +
          std::to_string(n.at("unique").get<std::uint64_t>()) + " | " +
          std::to_string(by.at(name).at("taken").get<std::uint64_t>()) + " | " +
          std::to_string(by.at(name).at("checked").get<std::uint64_t>()) + " |\n";
  return md;
}

std::string signatures_section(const Json& results) {
  std::string md =
      "\n## Signatures of the failing states\n\n| signature | states | first state | detailed |\n|---|---:|---:|---:|\n";
  for (const Json& g : results.at("signatures"))
    md += "| " + markdown_cell(g.at("signature").get<std::string>()) + " | " + std::to_string(g.at("states").get<std::uint64_t>()) +
          " | " + std::to_string(g.at("first").get<std::uint64_t>()) + " | " +
          std::to_string(g.at("detailed").get<std::uint64_t>()) + " |\n";
  if (results.at("signatures").empty()) md += "| (none) | | | |\n";
  return md;
}

// The verdicts at each crash point, by its number.
std::map<std::uint64_t, PointRow> point_rows(const std::vector<StateRecord>& states) {
  std::map<std::uint64_t, PointRow> points;
  for (const StateRecord& s : states) {
    PointRow& p = points[s.point];
    p.frame = s.frame;
    if (!s.last_mark.empty()) p.mark = s.last_mark;
    switch (s.verdict) {
      case crashlab::Verdict::pass: ++p.pass; break;
      case crashlab::Verdict::fail: ++p.fail; break;
      case crashlab::Verdict::needs_fsck: ++p.needs_fsck; break;
      case crashlab::Verdict::unreadable: ++p.unreadable; break;
    }
  }
  return points;
}

// states.dat, every point, for the plot.
std::string points_data(const std::map<std::uint64_t, PointRow>& points) {
  std::string dat = "# point frame pass fail needs_fsck unreadable\n";
  for (const auto& [index, p] : points)
    dat += std::to_string(index) + " " + std::to_string(p.frame) + " " + std::to_string(p.pass) + " " +
           std::to_string(p.fail) + " " + std::to_string(p.needs_fsck) + " " + std::to_string(p.unreadable) + "\n";
  return dat;
}

std::string failing_points_section(const std::map<std::uint64_t, PointRow>& points) {
  std::string md =
      "\n## Crash points with failing states\n\n| point | after frame | last mark | pass | fail | needs fsck | unreadable |\n"
      "|---:|---:|---|---:|---:|---:|---:|\n";
  std::size_t failing_points = 0;
  for (const auto& [index, p] : points) {
    if (p.fail + p.needs_fsck + p.unreadable == 0) continue;
    ++failing_points;
    md += "| " + std::to_string(index) + " | " + std::to_string(p.frame) + " | " + markdown_cell(p.mark) + " | " +
          std::to_string(p.pass) + " | " + std::to_string(p.fail) + " | " + std::to_string(p.needs_fsck) + " | " +
          std::to_string(p.unreadable) + " |\n";
  }
  if (failing_points == 0) md += "| | | (none) | | | | |\n";
  return md;
}

// One failing state's row: what it dropped, its verdict, what broke, its cause.
std::string failing_state_row(const Json& s) {
  std::string broke;
  const Json& v = s.contains("violations") ? s : s["ground_truth"];
  if (v.contains("error")) broke = v["error"].get<std::string>();
  if (v.contains("violations"))
    for (const Json& f : v["violations"]) broke += (broke.empty() ? "" : "; ") + violation_text(f);
  return "| " + std::to_string(s.at("ordinal").get<std::uint64_t>()) + " | " +
         std::to_string(s.at("point").get<std::uint64_t>()) + " | " + s.at("strategy").get<std::string>() + " | " +
         std::to_string(s.at("volatile").get<std::uint64_t>() - s.at("kept").get<std::uint64_t>() -
                        (s.contains("torn") ? 1 : 0)) +
         " of " + std::to_string(s.at("volatile").get<std::uint64_t>()) +
         (s.contains("torn") ? ", 1 torn (" + std::to_string(s["torn"].at("kept_bytes").get<std::uint64_t>()) + " of " +
                                   std::to_string(s["torn"].at("length").get<std::uint64_t>()) + " B)"
                             : "") +
         " | " + state_verdict(s) + " | " + short_cell(broke) + " | " + short_cell(cause_text(s)) + " |\n";
}

std::string failing_states_section(const std::vector<StateRecord>& states, std::uint64_t failing) {
  std::string md =
      "\n## Failing states\n\nThe detailed ones first (the first of each signature), then the others.\n\n"
      "| state | point | strategy | dropped | verdict | what broke | cause |\n|---:|---:|---|---|---|---|---|\n";
  std::size_t listed = 0;
  for (const bool detailed : {true, false})
    for (const StateRecord& record : states) {
      if (!record.failing() || record.detailed != detailed) continue;
      if (listed++ == kListed) break;
      md += failing_state_row(record.entry());
    }
  if (listed > kListed) md += "\n(" + std::to_string(failing - kListed) + " more in results.json.)\n";
  if (listed == 0) md += "| | | | | (none) | | |\n";
  return md;
}

// states.png and states.svg from states.dat: the states by verdict at each
// crash point, stacked.
void plot_states(const std::filesystem::path& dir, const std::map<std::uint64_t, PointRow>& points) {
  // The points' own range (gnuplot's autoscale rounds it out to the next tics).
  const std::uint64_t last = points.empty() ? 0 : points.rbegin()->first;
  std::string range = "set xrange [-1:";
  range.append(std::to_string(last + 1)).append("]\n");
  plot(dir, "states",
       range +
       "set title 'crash states by verdict at each crash point'\nset xlabel 'crash point (in the order of the run)'\n"
       "set ylabel 'unique states checked'\nset style fill solid 0.8 noborder\nset boxwidth 1\nset key top left\n"
       "set yrange [0:*]\n"
       "plot 'states.dat' using 1:($3+$4+$5+$6) with boxes lc rgb '#2e7d32' title 'pass', "
       "'' using 1:($4+$5+$6) with boxes lc rgb '#c62828' title 'fail', "
       "'' using 1:($5+$6) with boxes lc rgb '#ef6c00' title 'needs fsck', "
       "'' using 1:6 with boxes lc rgb '#6a1b9a' title 'unreadable'");
}

}  // namespace

void write_crash_report(const Results& all, const std::filesystem::path& dir, bool plot) {
  const VerdictCount c = count_verdicts(all.states);
  const std::map<std::uint64_t, PointRow> points = point_rows(all.states);
  const std::string md = summary_section(all.document, c) + signatures_section(all.document) +
                         failing_points_section(points) + failing_states_section(all.states, c.failing) +
                         (plot ? "\n![states by verdict at each crash point](states.png)\n" : "");
  write_report_file(dir, "table.md", md);
  write_report_file(dir, "states.dat", points_data(points));
  if (plot) plot_states(dir, points);
}

int crash_report_main(const ReportArgs& a) {
  Results all{read_results(a.results), {}};
  const Json& results = all.document;
  if (results.contains("shard"))
    throw std::runtime_error(a.results + ": the results of shard " + std::to_string(results["shard"].at("index").get<std::uint64_t>()) +
                             " of " + std::to_string(results["shard"].at("count").get<std::uint64_t>()) +
                             ": join every shard's with nvj crash merge, which writes the report");
  std::filesystem::path dir = a.out;
  if (dir.empty()) dir = std::filesystem::is_directory(a.results) ? std::filesystem::path(a.results)
                                                                 : std::filesystem::path(a.results).parent_path();
  if (dir.empty()) dir = ".";
  std::filesystem::create_directories(dir);
  all.states = take_states(all.document);
  write_crash_report(all, dir);
  const VerdictCount c = count_verdicts(all.states);
  std::printf("%s: table.md, states.dat, states.png, states.svg\n", dir.c_str());
  std::printf("%llu states checked, %llu failing\n", static_cast<unsigned long long>(c.checked),
              static_cast<unsigned long long>(c.failing));
  return 0;
}

namespace {

constexpr const char* kReportText = R"(Write the report of a check again from its results.json (the file, or the
folder holding it): table.md (the states per strategy, the crash points with
failing states, each failing state with what broke and its minimized cause),
states.dat and the plot of the states by verdict at each crash point
(states.png, states.svg), into --out DIR or beside results.json. A shard's
results are refused: nvj crash merge joins the shards and writes the report.
)";

}  // namespace

CrashSubcommand declare_crash_report(Command& crash) {
  auto report = std::make_shared<ReportArgs>();
  Command reports = crash.subcommand("report", "write a check's report again from its results.json");
  reports.describe(kReportText);
  reports.add("RESULTS", report->results, "results.json, or its folder").value_name("PATH");
  reports.add("--out", report->out, "the folder for the report (default: beside results.json)").value_name("DIR");
  return {reports, [report] {
            if (report->results.empty()) throw UsageError("nvj crash report: which RESULTS?");
            return crash_report_main(*report);
          }};
}

}  // namespace nvj::cli
