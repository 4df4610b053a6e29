// SPDX-License-Identifier: BSD-3-Clause
// E1, Morton 2001: synctest (the MTA simulator) on a tree with synchronous
// semantics (chattr +S), full data journalling, over the processes-per-
// directory matrix, with the journal internal on the disk model, external
// on NVRAM, external on a second disk, and internal but smaller. Per run:
// completion time, and the device time split into journal writes,
// checkpoint writes and data (each write's own time, then the time the
// disk's cache spent destaging journal blocks and home blocks), and the
// longest time the journal was full.
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include "tools/nvj/experiment/experiment.h"
#include "tools/nvj/experiment/report.h"
#include "tools/nvj/testbed/testbed.h"
#include "tools/workloads/progress_line.h"
#include "tools/workloads/synctest.h"

namespace nvj::cli {
namespace fs = std::filesystem;
namespace {

struct Config {
  std::string key, label;
  std::vector<std::string> parameters;
  bool external;
};

struct Run {
  const Config* config;
  std::uint32_t per_dir, dirs;
  workloads::SynctestResult synctest;
  std::uint64_t transactions = 0, logged_blocks = 0;
  double commit_p50_us = 0, commit_p99_us = 0;
  double journal_s = 0, checkpoint_s = 0, data_s = 0, longest_full_s = 0, full_s = 0;
  double journal_destage_s = 0, home_destage_s = 0;  // the cache's destaging of journal and home blocks
  bool fsck_clean = false;
};

std::string minutes(double s) {
  char b[32];
  std::snprintf(b, sizeof b, "%d:%04.1f", static_cast<int>(s) / 60, s - 60 * (static_cast<int>(s) / 60));
  return b;
}

Run measure(const Config& c, const workloads::SynctestOptions& base, std::uint32_t per_dir, const fs::path& run_dir,
            workloads::ProgressLine& bar, std::uint64_t& done, std::uint64_t total) {
  Testbed lab(TestbedOptions{run_dir, c.parameters, "data=journal", {}});
  lab.post("/reset-stats");  // what mkfs and mount did is not the workload's
  workloads::SynctestOptions o = base;
  o.directory = (lab.mount_point() / "spool").string();
  o.per_directory = per_dir;
  const std::uint64_t before = done;
  Run r{&c, per_dir, o.directories(), workloads::run_synctest(o, [&](std::uint64_t d, std::uint64_t) {
          done = before + d;
          bar.update(done, total);
        })};
  if (r.synctest.failure) throw std::runtime_error("synctest: " + r.synctest.failure->describe());
  const JsonFigures j(lab.get("/journal"), "GET /journal");
  const JsonFigures s(lab.get("/stats"), "GET /stats");
  r.transactions = j.count("committed_transactions");
  r.logged_blocks = j.count("logged_blocks");
  r.commit_p50_us = j.number("commit_latency_us.p50");
  r.commit_p99_us = j.number("commit_latency_us.p99");
  r.longest_full_s = j.number("longest_full_us") / 1e6;
  r.full_s = j.number("full_time_us") / 1e6;
  // The writes' own time (into the disk's cache when it has one) by class;
  // the cache's destaging (at flushes, to make room, or idle) by whose
  // blocks went home: the journal's (its region or export) or the rest's.
  r.checkpoint_s = j.number("traffic.checkpoint.device_time_us") / 1e6;
  r.data_s = (j.number("traffic.ordered.device_time_us") + j.number("traffic.other.device_time_us")) / 1e6;
  r.home_destage_s = s.number("exports.data.destaged_writes_us") / 1e6;
  if (c.external) {
    for (const char* part : {"seek", "rotation", "transfer"})
      r.journal_s += s.number(std::string("exports.journal.device_time_us.") + part) / 1e6;
    r.journal_destage_s = s.number("exports.journal.destaged_writes_us") / 1e6;
  } else {
    r.journal_s = j.number("traffic.journal.device_time_us") / 1e6;
    r.journal_destage_s = s.number("exports.data.regions.journal.destaged_writes_us") / 1e6;
  }
  lab.unmount();
  r.fsck_clean = lab.check().status == 0;
  if (!lab.teardown()) throw std::runtime_error("teardown failed (see above)");
  return r;
}

// The configuration's server parameters as one string: "data=1G journal=16M".
std::string parameter_list(const Config& c) {
  std::string s;
  for (const auto& p : c.parameters) s += (s.empty() ? "" : " ") + p;
  return s;
}

Json results_json(const std::vector<Run>& runs, const workloads::SynctestOptions& o, bool quick) {
  Json list = Json::array();
  for (const Run& r : runs)
    list.push_back(Json{{"config", r.config->key},
                        {"parameters", parameter_list(*r.config)},
                        {"processes_per_dir", r.per_dir},
                        {"directories", r.dirs},
                        {"synctest", r.synctest.json()},
                        {"transactions", r.transactions},
                        {"logged_blocks", r.logged_blocks},
                        {"commit_latency_us", {{"p50", json_round(r.commit_p50_us, 1)}, {"p99", json_round(r.commit_p99_us, 1)}}},
                        {"device_time_s",
                         {{"journal", json_round(r.journal_s, 3)},
                          {"journal_destage", json_round(r.journal_destage_s, 3)},
                          {"checkpoint", json_round(r.checkpoint_s, 3)},
                          {"data", json_round(r.data_s, 3)},
                          {"home_destage", json_round(r.home_destage_s, 3)}}},
                        {"journal_full_s", json_round(r.full_s, 3)},
                        {"longest_full_stall_s", json_round(r.longest_full_s, 3)},
                        {"fsck_clean", r.fsck_clean}});
  return Json{{"experiment", "morton2001"},
              {"quick", quick},
              {"synctest", {{"processes", o.processes}, {"passes", o.passes}, {"sync_tree", true}, {"data", "journal"}}},
              {"runs", list}};
}

std::string table_md(const std::vector<Run>& runs, const std::vector<Config>& configs,
                     const std::vector<std::uint32_t>& rows, const workloads::SynctestOptions& o) {
  std::string t = "# morton2001: synctest, " + std::to_string(o.processes) + " processes x " +
                  std::to_string(o.passes) + " files, chattr +S, data=journal\n\nCompletion time (m:ss.s):\n\n" +
                  "| processes/dir | directories |";
  for (const auto& c : configs) t += " " + c.label + " |";
  t += "\n|---:|---:|";
  for (std::size_t i = 0; i < configs.size(); ++i) t += "---:|";
  t += "\n";
  for (std::uint32_t per : rows) {
    t += "| " + std::to_string(per) + " | " + std::to_string((o.processes + per - 1) / per) + " |";
    for (const auto& c : configs)
      for (const Run& r : runs)
        if (r.config == &c && r.per_dir == per) t += ' ' + minutes(r.synctest.seconds) + " |";
    t += "\n";
  }
  t += "\nWhat the devices did (device time in seconds. journal, checkpoint (journalled blocks written home) and "
       "data: the writes as the devices took them, into the disk's write cache when it has one. destage: the "
       "time the disks then spent writing the cached journal blocks, and home blocks (checkpoint and data), "
       "to the platters, seeks and rotation included, at flushes, to make room or while idle. longest stall "
       "= longest time the journal was full):\n\n"
       "| journal | processes/dir | time s | files/s | transactions | blocks/transaction | commit p50 ms | "
       "journal s | journal destage s | checkpoint s | data s | home destage s | journal full s | "
       "longest stall s | e2fsck |\n"
       "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n";
  for (const Run& r : runs)
    t += "| " + r.config->label + " | " + std::to_string(r.per_dir) + " | " + fixed(r.synctest.seconds, 2) +
         " | " + fixed(r.synctest.files_per_second(), 1) + " | " + std::to_string(r.transactions) + " | " +
         fixed(r.transactions > 0 ? static_cast<double>(r.logged_blocks) / static_cast<double>(r.transactions) : 0, 1) +
         " | " +
         fixed(r.commit_p50_us / 1000, 2) + " | " + fixed(r.journal_s, 2) + " | " + fixed(r.journal_destage_s, 2) +
         " | " + fixed(r.checkpoint_s, 2) + " | " + fixed(r.data_s, 2) + " | " + fixed(r.home_destage_s, 2) + " | " +
         fixed(r.full_s, 2) + " | " +
         fixed(r.longest_full_s, 2) + " | " + (r.fsck_clean ? "clean" : "NOT CLEAN") + " |\n";
  return t;
}

void draw(const fs::path& out, const std::vector<Run>& runs, const std::vector<Config>& configs,
          const std::vector<std::uint32_t>& rows) {
  // Completion time against processes per directory, one line per journal.
  std::string dat = "# processes_per_dir";
  for (const auto& c : configs) dat += " " + c.key;
  dat += "\n";
  for (std::uint32_t per : rows) {
    dat += std::to_string(per);
    for (const auto& c : configs)
      for (const Run& r : runs)
        if (r.config == &c && r.per_dir == per) dat += ' ' + fixed(r.synctest.seconds, 3);
    dat += "\n";
  }
  write_report_file(out, "completion.dat", dat);
  std::string script =
      "set title 'synctest completion time (lower is better)'\nset xlabel 'processes per directory'\n"
      "set ylabel 'seconds'\nset logscale x\nset key top left\nset grid\nset yrange [0:*]\nplot ";
  for (std::size_t i = 0; i < configs.size(); ++i)
    script += std::string(i ? ", " : "") + "'completion.dat' using 1:" + std::to_string(i + 2) +
              " with linespoints lw 2 title '" + configs[i].label + "'";
  plot(out, "completion", script);

  // Device time split per run, stacked.
  std::string split = "# run journal journal_destage checkpoint data home_destage\n";
  for (const Run& r : runs)
    split += "\"" + r.config->key + "\\n" + std::to_string(r.per_dir) + "/dir\" " + fixed(r.journal_s, 3) + " " +
             fixed(r.journal_destage_s, 3) + " " + fixed(r.checkpoint_s, 3) + " " + fixed(r.data_s, 3) + " " +
             fixed(r.home_destage_s, 3) + "\n";
  write_report_file(out, "device_time.dat", split);
  plot(out, "device_time",
       "set title 'where the device time went'\nset ylabel 'device seconds'\nset style data histograms\n"
       "set style histogram rowstacked\nset style fill solid 0.8 border -1\nset boxwidth 0.7\nset key outside top center horizontal\n"
       "set xtics rotate by -30 font ',8'\nset grid ytics\n"
       "plot 'device_time.dat' using 2:xtic(1) title 'journal writes', '' using 3 title 'journal destage', "
       "'' using 4 title 'checkpoint writes', '' using 5 title 'data (ordered and other)', "
       "'' using 6 title 'home destage (checkpoint and data)'");
}

}  // namespace

int morton2001(const ExperimentOptions& options) {
  // Sizes: the full run writes ~300 MB through a 64 MiB journal (it fills
  // and is checkpointed several times over); quick keeps the same shape at
  // a fraction.
  const bool small = options.quick;
  const std::string journal = small ? "16M" : "64M";
  const std::string small_journal = small ? "4M" : "16M";
  const std::string data = small ? "1G" : "2G";
  const std::vector<Config> configs = {
      {"internal-hdd", "internal, hdd", {"data=" + data, "fs-journal=internal:" + journal, "journal-model=data"}, false},
      {"external-nvram", "external, nvram", {"data=" + data, "journal=" + journal, "journal-model=nvram"}, true},
      {"external-hdd", "external, hdd", {"data=" + data, "journal=" + journal, "journal-model=hdd"}, true},
      {"internal-hdd-small", "internal " + small_journal + ", hdd",
       {"data=" + data, "fs-journal=internal:" + small_journal, "journal-model=data"}, false}};
  workloads::SynctestOptions o;
  o.sync_tree = true;
  std::vector<std::uint32_t> rows{50, 20, 10, 5, 1};
  if (options.quick) {
    o.processes = 20;
    o.passes = 15;
    rows = {10, 1};
  }
  if (options.passes != 0) o.passes = options.passes;
  std::printf("morton2001: synctest, %u processes x %u files (5..250 KiB), chattr +S, data=journal; "
              "%zu journal placements x %zu rows\n",
              o.processes, o.passes, configs.size(), rows.size());
  std::fflush(stdout);
  std::vector<Run> runs;
  const std::uint64_t total = std::uint64_t{o.processes} * o.passes * configs.size() * rows.size();
  std::uint64_t done = 0;
  {
    workloads::ProgressLine bar(stderr, "files");
    for (const auto& c : configs)
      for (std::uint32_t per : rows) {
        if (options.interrupted != nullptr && *options.interrupted != 0) throw std::runtime_error("interrupted");
        runs.push_back(measure(c, o, per, options.run_dir / (c.key + "-" + std::to_string(per)), bar, done, total));
        // After every run: a long experiment stopped half-way keeps what it measured.
        write_report_json(options.out, "results.json", results_json(runs, o, options.quick));
        write_report_file(options.out, "table.md", table_md(runs, configs, rows, o));
      }
  }
  const std::string table = table_md(runs, configs, rows, o);
  if (rows.size() > 1) draw(options.out, runs, configs, rows);
  std::printf("\n%s\nResults in %s (results.json, table.md%s)\n", table.c_str(), options.out.c_str(),
              rows.size() > 1 ? ", completion.png/svg, device_time.png/svg" : "");
  for (const Run& r : runs)
    if (!r.fsck_clean) return 1;
  return 0;
}

}  // namespace nvj::cli
