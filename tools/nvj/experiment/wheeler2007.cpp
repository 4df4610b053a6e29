// SPDX-License-Identifier: BSD-3-Clause
// E2, Wheeler 2007: fs_mark writing 10240-byte files, fsync before close,
// into one shared directory, threads 1..40, with the journal external on an
// NVRAM, an SSD and a disk model (the data on NVRAM, like the seed's
// low-latency array), each at the default max_batch_time and at zero. Per
// point: files/s, and the journal transactions behind it (how many files
// each commit carried, blocks per transaction, commit latency).
//
// Two kinds of synchronous writes: plain fsync, which in today's ext4 kicks
// a commit and waits for it without a journal handle, so jbd2's batching
// wait (what max_batch_time bounds) never runs; and the same files in a
// `chattr +S` directory, where every create and write is a synchronous
// handle, and jbd2_journal_stop waits for other handles to join as ext3's
// fsync did in the seed's day.
//
// XFS beside it (--fs), its log external on the same three models: XFS has
// no batching knob. Its commits gather in the in-core log buffer being
// filled while the ones before it are written, and an fsync forces the log
// up to its own commit: concurrent fsyncs share a log write. Its "commits"
// are the log records the server decoded (each a log buffer written).
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/command_line.h"
#include "tools/nvj/experiment/experiment.h"
#include "tools/nvj/experiment/report.h"
#include "tools/nvj/host/workloads/fs_mark.h"
#include "tools/nvj/testbed/testbed.h"
#include "tools/workloads/progress_line.h"
#include "tools/workloads/synctest.h"

namespace nvj::cli {
namespace fs = std::filesystem;
namespace {

struct Journal {
  std::string key, label, model;
};

struct Batch {
  std::string key, label, mount_options;
};

struct Sync {
  std::string key, label;
  bool sync_directory;  // chattr +S on the point's directory
};

struct Line;

struct WheelerPoint {
  const Line* line;
  std::uint64_t threads;
  FsMarkResult fs_mark;
  std::uint64_t transactions = 0, logged_blocks = 0;  // XFS: log records; no logged blocks
  std::uint64_t log_bytes = 0;
  double commit_p50_us = 0;
  double journal_device_us = 0;  // the journal model's busy time: its requests' and its destaging
  double files_per_transaction() const {
    return transactions > 0 ? static_cast<double>(fs_mark.files) / static_cast<double>(transactions) : 0;
  }
  double blocks_per_transaction() const {
    return transactions > 0 ? static_cast<double>(logged_blocks) / static_cast<double>(transactions) : 0;
  }
  double journal_device_us_per_transaction() const {
    return transactions > 0 ? journal_device_us / static_cast<double>(transactions) : 0;
  }
};

struct Line {  // one curve: a filesystem, its journal device at one max_batch_time, one kind of sync
  std::string filesystem;
  const Journal* journal;
  const Batch* batch;
  const Sync* sync;
  bool fsck_clean = false;
  bool ext4() const { return filesystem == "ext4"; }
  std::string key() const {
    return sync->key + "-" + (ext4() ? "" : filesystem + "-") + journal->key + (ext4() ? "-" + batch->key : "");
  }
  std::string label() const {
    return ext4() ? journal->label + ", " + batch->label : filesystem + ", log on " + journal->label;
  }
};

struct WheelerPlan {
  std::vector<std::uint64_t> threads;
  std::uint64_t files_per_point;  // split evenly over the threads
  std::string data, journal;
  std::string xfs_log = "64M";    // the least mkfs.xfs takes
};

// One server per curve; every thread count of the curve runs on it, each
// in a fresh directory, the statistics reset before each.
void measure_line(Line& line, const WheelerPlan& plan, const fs::path& run_dir, std::vector<WheelerPoint>& points,
                  workloads::ProgressLine& bar, std::uint64_t& done, std::uint64_t total,
                  const volatile std::sig_atomic_t* interrupted) {
  TestbedOptions o{run_dir,
                   {"data=" + plan.data, "data-model=nvram", "journal=" + plan.journal,
                    "journal-model=" + line.journal->model},
                   line.batch->mount_options,
                   {}};
  if (!line.ext4()) {
    o.filesystem = line.filesystem;
    o.parameters = {"data=" + plan.data, "data-model=nvram", "journal=" + plan.xfs_log,
                    "journal-model=" + line.journal->model, "fs=none"};
  }
  Testbed lab(std::move(o));
  for (std::uint64_t t : plan.threads) {
    if (interrupted != nullptr && *interrupted != 0) throw std::runtime_error("interrupted");
    const fs::path dir = lab.mount_point() / ('t' + std::to_string(t));
    fs::create_directory(dir);
    if (line.sync->sync_directory) workloads::set_sync_flag(dir.string());
    lab.post("/reset-stats");
    WheelerPoint p{&line, t,
            run_fs_mark(FsMarkOptions{dir, t, plan.files_per_point / t, 10240, 1, run_dir / "fs_mark.log"})};
    const JsonFigures j(lab.get("/journal"), "GET /journal");
    if (line.ext4()) {
      p.transactions = j.count("committed_transactions");
      p.logged_blocks = j.count("logged_blocks");
      p.commit_p50_us = j.number("commit_latency_us.p50");
    } else {  // the log records the server decoded; latency: first write to durable
      p.transactions = j.count("records");
      p.commit_p50_us = j.number("log_write_latency_us.p50");
    }
    p.log_bytes = j.count("log_bytes");
    // The model's time, not the clock's: what the journal device spent on
    // the point's requests, and on taking its cache's blocks home whenever
    // that happened (a disk destages between requests when idle).
    const JsonFigures s(lab.get("/stats"), "GET /stats");
    for (const char* part : {"seek", "rotation", "transfer"})
      p.journal_device_us += s.number(std::string("exports.journal.device_time_us.") + part);
    p.journal_device_us += s.number("exports.journal.destaged_writes_us");
    points.push_back(p);
    done += plan.files_per_point;
    bar.update(done, total);
  }
  lab.unmount();
  line.fsck_clean = lab.check().status == 0;
  if (!lab.teardown()) throw std::runtime_error("teardown failed (see above)");
}

const WheelerPoint* find(const std::vector<WheelerPoint>& points, const Line& line, std::uint64_t threads) {
  for (const WheelerPoint& p : points)
    if (p.line == &line && p.threads == threads) return &p;
  return nullptr;
}

Json results_json(const std::vector<WheelerPoint>& points, const std::vector<Line>& lines, const WheelerPlan& plan, bool quick) {
  Json curves = Json::array();
  for (const Line& l : lines) {
    Json list = Json::array();
    for (std::uint64_t t : plan.threads)
      if (const WheelerPoint* p = find(points, l, t)) {
        Json point{{"threads", t},
                   {"files", p->fs_mark.files},
                   {"files_per_second", json_round(p->fs_mark.files_per_second, 1)},
                   {"transactions", p->transactions},
                   {"log_bytes", p->log_bytes},
                   {"files_per_transaction", json_round(p->files_per_transaction(), 2)},
                   {"commit_latency_us_p50", json_round(p->commit_p50_us, 1)},
                   {"journal_device_us_per_transaction", json_round(p->journal_device_us_per_transaction(), 1)}};
        if (l.ext4()) point["logged_blocks"] = p->logged_blocks;
        list.push_back(std::move(point));
      }
    curves.push_back(Json{{"filesystem", l.filesystem},
                          {"sync", l.sync->key},
                          {"journal_model", l.journal->model},
                          {"max_batch_time", l.batch->key},
                          {"fsck_clean", l.fsck_clean},
                          {"points", list}});
  }
  return Json{{"experiment", "wheeler2007"},
              {"quick", quick},
              {"fs_mark", {{"file_size", 10240}, {"sync", "fsync before close"}, {"files_per_point", plan.files_per_point}}},
              {"data", plan.data + " nvram"},
              {"journal_size", plan.journal},
              {"xfs_log_size", plan.xfs_log},
              {"lines", curves}};
}

std::vector<const Line*> lines_of(const std::vector<Line>& lines, const Sync& sync) {
  std::vector<const Line*> mine;
  for (const Line& l : lines)
    if (l.sync == &sync) mine.push_back(&l);
  return mine;
}

std::string table_md(const std::vector<WheelerPoint>& points, const std::vector<Line>& lines, const std::vector<Sync>& syncs,
                     const WheelerPlan& plan) {
  std::string t = "# wheeler2007: fs_mark, 10240-byte files, one shared directory, " +
                  std::to_string(plan.files_per_point) + " files per point\n";
  for (const Sync& sync : syncs) {
    t += "\nFiles/s, " + sync.label + " (higher is better):\n\n| threads |";
    for (const Line* l : lines_of(lines, sync)) t += ' ' + l->label() + " |";
    t += "\n|---:|";
    for (std::size_t i = 0; i < lines_of(lines, sync).size(); ++i) t += "---:|";
    t += "\n";
    for (std::uint64_t n : plan.threads) {
      t += "| " + std::to_string(n) + " |";
      for (const Line* l : lines_of(lines, sync)) {
        const WheelerPoint* p = find(points, *l, n);
        t += ' ' + (p ? fixed(p->fs_mark.files_per_second, 0) : std::string("-")) + " |";
      }
      t += "\n";
    }
  }
  t += "\nBehind each point (the server's journal decoder): commits (ext4: jbd2 transactions; XFS: log records, "
       "each a log buffer written), files per commit (how many files one commit carried), journal blocks per "
       "transaction (ext4), KiB of log per commit, median commit latency (ext4: first log write to the commit "
       "block's acknowledgement; XFS: a record's first write to the acknowledgement that made it durable), and the "
       "journal model's device time per commit (its requests' seek, rotation and transfer, and destaging its cache; "
       "not waiting):\n\n"
       "| filesystem | sync | journal | max_batch_time | threads | files/s | commits | files/commit | "
       "blocks/transaction | log KiB/commit | commit p50 ms | device ms/commit |\n"
       "|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|\n";
  for (const Line& l : lines)
    for (std::uint64_t n : plan.threads)
      if (const WheelerPoint* p = find(points, l, n))
        t += "| " + l.filesystem + " | " + l.sync->key + " | " + l.journal->label + " | " +
             (l.ext4() ? l.batch->label : std::string("(none)")) + " | " + std::to_string(n) + " | " +
             fixed(p->fs_mark.files_per_second, 1) + " | " + std::to_string(p->transactions) + " | " +
             fixed(p->files_per_transaction(), 2) + " | " + (l.ext4() ? fixed(p->blocks_per_transaction(), 1) : "-") +
             " | " + fixed(p->transactions ? static_cast<double>(p->log_bytes) / 1024 / static_cast<double>(p->transactions) : 0, 1) +
             " | " + fixed(p->commit_p50_us / 1000, 3) + " | " +
             fixed(p->journal_device_us_per_transaction() / 1000, 3) + " |\n";
  t += "\nChecked after each curve (e2fsck -fn, xfs_repair -n):";
  for (const Line& l : lines) t += ' ' + l.key() + ' ' + (l.fsck_clean ? "clean" : "NOT CLEAN") + ';';
  t.back() = '\n';
  return t;
}

// Per kind of sync: NAME.dat, files_per_second[_KEY] and
// files_per_transaction[_KEY] plots.
void draw(const fs::path& out, const std::vector<WheelerPoint>& points, const std::vector<const Line*>& lines,
          const Sync& sync, const std::string& suffix, const WheelerPlan& plan) {
  const std::string data = "points" + suffix + ".dat";
  std::string dat = "# " + sync.label + "; threads, then per line: files/s files/transaction\n# threads";
  for (const Line* l : lines) dat += ' ' + l->key() + ' ' + l->key() + "-files-per-transaction";
  dat += "\n";
  for (std::uint64_t n : plan.threads) {
    dat += std::to_string(n);
    for (const Line* l : lines) {
      const WheelerPoint* p = find(points, *l, n);
      dat += p ? ' ' + fixed(p->fs_mark.files_per_second, 2) + ' ' + fixed(p->files_per_transaction(), 3) : " NaN NaN";
    }
    dat += "\n";
  }
  write_report_file(out, data, dat);
  // One colour per journal device; ext4 solid at the default
  // max_batch_time and dashed at zero, XFS dotted.
  const auto colour = [](const Line& l) {
    return l.journal->key == "nvram" ? "1" : l.journal->key == "ssd" ? "2" : "3";
  };
  const auto dash = [](const Line& l) { return !l.ext4() ? "3" : l.batch->key == "0" ? "2" : "1"; };
  const auto curves = [&](std::size_t column_offset) {
    std::string s;
    for (std::size_t i = 0; i < lines.size(); ++i)
      s += std::string(i ? ", " : "") + "'" + data + "' using 1:" + std::to_string(2 + 2 * i + column_offset) +
           " with linespoints lw 2 lc " + colour(*lines[i]) + " dt " + dash(*lines[i]) + " title '" +
           lines[i]->label() + "'";
    return s;
  };
  std::string xtics = "set xtics (";
  for (std::size_t i = 0; i < plan.threads.size(); ++i) {
    if (i) xtics += ',';
    xtics += std::to_string(plan.threads[i]);
  }
  xtics += ")\nset xrange [" + fixed(0.9 * static_cast<double>(plan.threads.front()), 2) + ":" +
           fixed(1.1 * static_cast<double>(plan.threads.back()), 2) + "]\n";
  plot(out, "files_per_second" + suffix,
       "set title 'fs_mark, 10240-byte files, one directory, " + sync.label + " (higher is better)'\n"
       "set xlabel 'threads'\nset ylabel 'files/s'\nset logscale xy\nset key outside right\nset grid\n" + xtics +
           "plot " + curves(0));
  plot(out, "files_per_transaction" + suffix,
       "set title 'files per journal transaction, " + sync.label + "'\nset xlabel 'threads'\n"
       "set ylabel 'files per transaction'\nset logscale x\nset key outside right\nset grid\nset yrange [0:*]\n" +
           xtics + "plot " + curves(1));
}

}  // namespace

int wheeler2007(const ExperimentOptions& options) {
  static const std::vector<Journal> journals = {
      {"nvram", "NVRAM", "nvram"}, {"ssd", "SSD", "ssd"}, {"hdd", "disk", "hdd"}};
  static const std::vector<Batch> batches = {{"default", "max_batch_time default", ""},
                                             {"0", "max_batch_time=0", "max_batch_time=0"}};
  static const std::vector<Sync> syncs = {{"fsync", "fsync before close", false},
                                          {"syncdir", "in a chattr +S directory", true}};
  static const Batch no_knob{"none", "no batching knob", ""};
  WheelerPlan plan{{1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 40}, 960, "1G", "64M"};  // 960 splits evenly over each
  if (options.quick) plan = WheelerPlan{{1, 2, 4, 8, 16}, 160, "512M", "32M"};
  const std::vector<std::string> filesystems =
      options.filesystems.empty() ? std::vector<std::string>{"ext4", "xfs"} : options.filesystems;
  for (const auto& f : filesystems)
    if (f == "btrfs")
      throw UsageError("nvj experiment wheeler2007: --fs btrfs: btrfs has no journal or log device to put on the "
                       "models (ext4 and xfs have)");
  std::vector<Line> lines;
  for (const auto& f : filesystems)
    for (const auto& y : syncs)
      for (const auto& j : journals) {
        if (f != "ext4") {
          lines.push_back(Line{f, &j, &no_knob, &y});
          continue;
        }
        for (const auto& b : batches) lines.push_back(Line{f, &j, &b, &y});
      }
  std::printf("wheeler2007: fs_mark, 10240-byte files, one directory, %llu files per point; threads %llu..%llu; "
              "journal external on NVRAM, SSD, disk models, max_batch_time default and 0 (ext4); fsync, and in a "
              "chattr +S directory; on",
              static_cast<unsigned long long>(plan.files_per_point),
              static_cast<unsigned long long>(plan.threads.front()), static_cast<unsigned long long>(plan.threads.back()));
  for (const auto& f : filesystems) std::printf(" %s", f.c_str());
  std::printf("\n");
  std::fflush(stdout);
  std::vector<WheelerPoint> points;
  const std::uint64_t total = plan.files_per_point * plan.threads.size() * lines.size();
  std::uint64_t done = 0;
  {
    workloads::ProgressLine bar(stderr, "files");
    for (Line& l : lines)
      measure_line(l, plan, options.run_dir / l.key(), points, bar, done, total, options.interrupted);
  }
  write_report_json(options.out, "results.json", results_json(points, lines, plan, options.quick));
  const std::string table = table_md(points, lines, syncs, plan);
  write_report_file(options.out, "table.md", table);
  for (const Sync& y : syncs) draw(options.out, points, lines_of(lines, y), y, y.sync_directory ? "_syncdir" : "", plan);
  std::printf("\n%s\nResults in %s (results.json, table.md, files_per_second[_syncdir].png/svg, "
              "files_per_transaction[_syncdir].png/svg)\n",
              table.c_str(), options.out.c_str());
  for (const Line& l : lines)
    if (!l.fsck_clean) return 1;
  return 0;
}

}  // namespace nvj::cli
