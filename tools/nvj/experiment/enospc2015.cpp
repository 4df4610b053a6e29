// SPDX-License-Identifier: BSD-3-Clause
// E5, Phillips 2015 ("How fast can we fail?"): small volumes on a RAM-like
// (NVRAM model) and a disk model, filled three ways: dd of 20 MiB far from
// full and just over full, a source tree untarred again and again until tar
// fails, and the parallel writer (1000 tasks x 40 KiB into 9 directories)
// far from full and over full. Per run: the time (to finish or to fail),
// the error, the fill level reached, whether files can still be removed
// when full, and after a clean unmount and mount whether every
// acknowledged write reads back.
//
// On ext4 (its journal inside), XFS (its log inside) and btrfs (--fs, the
// seed's three columns). btrfs below 1 GiB is made with mixed block groups,
// as mkfs.btrfs advises for small filesystems. XFS cannot be made below
// 300 MiB: a volume meant to be smaller is 320 MiB with a preallocated
// filler file that leaves 80% of the nominal size free, so that the same
// workloads overflow it; its fill counts the filler. --quick runs XFS and
// btrfs on the RAM-like volume only (btrfs's 1000 writers take minutes on
// the disk model).
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/duration.h"
#include "tools/nvj/experiment/experiment.h"
#include "tools/nvj/experiment/report.h"
#include "tools/nvj/experiment/source_tree.h"
#include "tools/nvj/host/files/text_pattern.h"
#include "tools/nvj/host/processes/process.h"
#include "tools/nvj/testbed/testbed.h"
#include "tools/workloads/progress_line.h"
#include "tools/workloads/writers.h"

namespace nvj::cli {
namespace fs = std::filesystem;
namespace {

struct Volume {
  std::string key, label, model;
};

// What one untar copy took, and what the server saw meanwhile (the change in
// its /journal counters from the copy's start to its end).
struct Copy {
  double seconds = 0;
  std::uint64_t transactions = 0;  // committed
  double journal_full_s = 0;  // the log's free space below a quarter
  double journal_mib = 0, checkpoint_mib = 0, data_mib = 0;  // written, by class
};

struct Outcome {
  std::string test, label;  // "dd-over", "dd 20 MiB, just over full"
  std::string filesystem;
  const Volume* volume;
  std::string size;         // the volume's, nominal
  std::string device_size;  // the export's (XFS: at least its least)
  double seconds = 0;       // to finish, or to fail
  bool enospc = false;      // ended on "No space left on device"
  std::string error;        // the failing command's message
  double fill = 0;          // used / all blocks when it ended
  std::string detail;
  bool intact = false;      // every acknowledged write read back after a remount
  std::string check;        // what was compared
  bool fsck_clean = false;
  std::vector<Copy> copies;  // untar: each copy, the failing one last

  Outcome(std::string t, std::string l, const std::string& f, const Volume& v, std::string s)
      : test(std::move(t)), label(std::move(l)), filesystem(f), volume(&v), size(std::move(s)), device_size(size) {}
};

struct Sizes {
  std::string dd_far, dd_over, untar, writers_far, writers_over;
  std::uint32_t tree_files, tree_dirs, writer_rounds;
};

constexpr std::uint64_t kXfsLeast = 320ull << 20;  // mkfs.xfs takes 300 MiB at least

std::uint64_t mib_of(const std::string& size) {  // "16M", "1G"
  const std::uint64_t n = std::stoull(size);
  return size.back() == 'G' ? n << 10 : n;
}

TestbedOptions volume_options(const fs::path& run_dir, const std::string& filesystem, const Volume& v,
                              const std::string& size) {
  TestbedOptions o{run_dir, {"data=" + size, "data-model=" + v.model}, "", {}};
  o.filesystem = filesystem;
  if (filesystem == "ext4") {
    o.parameters.push_back("fs-journal=internal");
    return o;
  }
  o.parameters.push_back("fs=none");
  o.exports = {"data"};  // XFS's log inside, like ext4's journal
  if (filesystem == "btrfs" && mib_of(size) < 1024) o.mkfs_options = {"--mixed"};
  if (filesystem == "xfs" && (mib_of(size) << 20) < kXfsLeast) o.parameters[0] = "data=320M";
  return o;
}

// An XFS larger than the nominal size: a filler file leaves 80% of that free.
void leave_nominal_space(const Testbed& lab, Outcome& r) {
  if (r.filesystem != "xfs" || (mib_of(r.size) << 20) >= kXfsLeast) return;
  r.device_size = "320M";
  const std::uint64_t want = (mib_of(r.size) << 20) / 10 * 8;
  const std::uint64_t free_now = fs::space(lab.mount_point()).available;
  if (free_now <= want) return;
  run_checked({"fallocate", "-l", std::to_string(free_now - want), (lab.mount_point() / "filler").string()});
  run_checked({"sync", "-f", lab.mount_point().string()});
}

// Unmount and mount again (the kernel now reads from the device what it
// acknowledged), run `verify`, unmount, e2fsck, tear down.
void finish(Testbed& lab, Outcome& r, const std::function<void()>& verify) {
  lab.unmount();
  lab.mount();
  verify();
  lab.unmount();
  r.fsck_clean = lab.check().status == 0;
  if (!lab.teardown()) throw std::runtime_error("teardown failed (see above)");
}

bool is_enospc(const std::string& message) { return message.find("No space left on device") != std::string::npos; }

// dd of 20 MiB (a seeded pattern, so what it wrote can be compared) with
// conv=fsync.
Outcome run_dd(const fs::path& run_dir, const std::string& f, const Volume& v, const std::string& size,
               const fs::path& source, bool over) {
  Outcome r{over ? "dd-over" : "dd-far", over ? "dd 20 MiB, just over full" : "dd 20 MiB, far from full", f, v, size};
  Testbed lab(volume_options(run_dir, f, v, size));
  leave_nominal_space(lab, r);
  const fs::path target = lab.mount_point() / "fill";
  const auto start = std::chrono::steady_clock::now();
  const auto dd = run({"dd", "if=" + source.string(), "of=" + target.string(), "bs=1M", "conv=fsync"});
  r.seconds = seconds_since(start);
  r.fill = workloads::filesystem_fill(lab.mount_point());
  const auto bytes = TextPattern(R"((\d+) bytes)").search(dd.output);
  const std::uint64_t copied = bytes ? std::stoull(bytes->groups[1]) : 0;
  if (dd.status != 0) {
    r.enospc = is_enospc(dd.output);
    r.error = dd.output.substr(0, dd.output.find('\n'));
  }
  r.detail = std::to_string(copied >> 10) + " KiB written";
  finish(lab, r, [&] {
    const auto cmp = run({"cmp", "-n", std::to_string(copied), source.string(), target.string()});
    r.intact = cmp.status == 0;
    r.check = std::to_string(copied >> 10) + " KiB compared with the source";
    // Still full after the remount: can the file be removed?
    if (dd.status != 0) r.detail += fs::remove(target) ? "; rm when full: ok" : "; rm when full: FAILED";
  });
  return r;
}

// The server's journal counters now, as a Copy (seconds 0). For XFS the
// commits are its log records, and the log has no "full" mark; btrfs has
// no journal (0 commits, its writes all data).
Copy journal_counters(const Testbed& lab) {
  const std::string text = lab.get("/journal");
  const JsonFigures j(text, "GET /journal");
  // Compared as JSON, not read out as a string: GCC 12 at -O3 sees a null
  // pointer in nlohmann's string access when this file shares a unity
  // batch with some others (-Wnull-dereference, a false alarm).
  const Json journal = parse_json(text, "GET /journal");
  const bool xfs = journal.contains("format") && journal.at("format") == Json("xfs");
  constexpr double kBytesPerMiB = 1 << 20;
  Copy c;
  c.transactions = j.count(xfs ? "records" : "committed_transactions");
  c.journal_full_s = xfs ? 0 : j.number("full_time_us") / 1e6;
  c.journal_mib = j.number("traffic.journal.bytes") / kBytesPerMiB;
  c.checkpoint_mib = j.number("traffic.checkpoint.bytes") / kBytesPerMiB;
  c.data_mib = (j.number("traffic.ordered.bytes") + j.number("traffic.other.bytes")) / kBytesPerMiB;
  return c;
}

Copy operator-(const Copy& a, const Copy& b) {
  return Copy{a.seconds - b.seconds,         a.transactions - b.transactions, a.journal_full_s - b.journal_full_s,
              a.journal_mib - b.journal_mib, a.checkpoint_mib - b.checkpoint_mib, a.data_mib - b.data_mib};
}

// Untars the tree into c1, c2, ... until tar fails (or `limit` copies).
Outcome run_untar(const fs::path& run_dir, const std::string& f, const Volume& v, const std::string& size,
                  const fs::path& archive) {
  Outcome r{"untar", "untar a source tree until full", f, v, size};
  Testbed lab(volume_options(run_dir, f, v, size));
  leave_nominal_space(lab, r);
  constexpr int kLimit = 1000;
  int copies = 0;
  RunResult tar;
  Copy before = journal_counters(lab);
  for (int i = 1; i <= kLimit; ++i) {
    const fs::path copy = lab.mount_point() / ('c' + std::to_string(i));
    fs::create_directory(copy);
    const auto start = std::chrono::steady_clock::now();
    tar = run({"tar", "-xf", archive.string(), "-C", copy.string()});
    const double seconds = seconds_since(start);
    Copy after = journal_counters(lab);
    r.copies.push_back(after - before);
    r.copies.back().seconds = seconds;
    before = after;
    if (tar.status != 0) break;
    copies = i;
  }
  r.fill = workloads::filesystem_fill(lab.mount_point());
  r.seconds = r.copies.back().seconds;
  double all = 0;
  for (std::size_t i = 0; i + 1 < r.copies.size(); ++i) all += r.copies[i].seconds;
  r.detail = std::to_string(copies) + " copies in " + fixed(all, 2) + " s";
  if (tar.status != 0) {
    r.enospc = is_enospc(tar.output);
    r.error = tar.output.substr(0, tar.output.find('\n'));
    r.detail += ", copy " + std::to_string(copies + 1) + " failed after " + fixed(r.seconds, 3) + " s";
    const fs::path partial = lab.mount_point() / ('c' + std::to_string(copies + 1));
    const auto start = std::chrono::steady_clock::now();
    std::error_code ec;
    fs::remove_all(partial, ec);
    r.detail += ec ? "; rm -r when full: FAILED (" + ec.message() + ")"
                   : "; rm -r when full: " + fixed(seconds_since(start), 3) + " s";
  }
  finish(lab, r, [&] {
    int same = 0;
    for (int i = 1; i <= copies; ++i)
      same += run({"tar", "-df", archive.string(), "-C", (lab.mount_point() / ('c' + std::to_string(i))).string()})
                  .status == 0;
    r.intact = same == copies;
    r.check = std::to_string(same) + " of " + std::to_string(copies) + " copies equal to the archive (tar -d)";
  });
  return r;
}

// The parallel writer: 1000 tasks, each its own file of 40 x 1 KiB chunks,
// in 9 directories, `rounds` rewrites.
Outcome run_writers(const fs::path& run_dir, const std::string& f, const Volume& v, const std::string& size,
                    std::uint32_t rounds, bool over) {
  Outcome r{over ? "writers-over" : "writers-far",
            "writers 1000 x 40 KiB, " + std::string(over ? "over full" : std::to_string(rounds) + " rounds"), f, v,
            size};
  Testbed lab(volume_options(run_dir, f, v, size));
  leave_nominal_space(lab, r);
  workloads::WritersOptions o;
  o.directory = (lab.mount_point() / "w").string();
  o.rounds = rounds;
  const auto w = workloads::run_writers(o);
  r.seconds = w.seconds;
  r.fill = w.fill;
  if (w.failure) {
    r.enospc = w.failure->error == ENOSPC;
    r.error = w.failure->describe();
  }
  r.detail = std::to_string(w.bytes >> 10) + " KiB acknowledged, " + std::to_string(w.rounds_done) + " rounds done";
  finish(lab, r, [&] {
    const auto losses = workloads::verify_writers(o, w.ledger);
    r.intact = losses.empty();
    std::uint64_t chunks = 0;
    for (const auto& l : w.ledger) chunks += l.chunks;
    r.check = std::to_string(chunks) + " chunks of the last round checked" +
              (losses.empty() ? "" : ", " + std::to_string(losses.size()) + " files differ: " + losses.front().detail);
  });
  return r;
}

Json results_json(const std::vector<Outcome>& runs, bool quick) {
  Json list = Json::array();
  for (const Outcome& r : runs) {
    Json run{{"test", r.test},
             {"filesystem", r.filesystem},
             {"volume_model", r.volume->model},
             {"volume_size", r.size},
             {"device_size", r.device_size},
             {"seconds", json_round(r.seconds, 4)},
             {"enospc", r.enospc},
             {"failed", !r.error.empty()},
             {"fill", json_round(r.fill, 4)},
             {"acknowledged_intact", r.intact},
             {"fsck_clean", r.fsck_clean}};
    if (!r.copies.empty()) {
      Json copies = Json::array();
      for (const Copy& c : r.copies)
        copies.push_back(Json{{"seconds", json_round(c.seconds, 4)},
                              {"transactions", c.transactions},
                              {"journal_full_s", json_round(c.journal_full_s, 4)},
                              {"journal_mib", json_round(c.journal_mib, 3)},
                              {"checkpoint_mib", json_round(c.checkpoint_mib, 3)},
                              {"data_mib", json_round(c.data_mib, 3)}});
      run["copies"] = copies;
    }
    list.push_back(run);
  }
  return Json{{"experiment", "enospc2015"}, {"quick", quick}, {"runs", list}};
}

std::string table_md(const std::vector<Outcome>& runs) {
  std::string t =
      "# enospc2015: how fast can we fail? ext4 (journal inside), XFS (log inside), btrfs\n\n"
      "| filesystem | test | volume | size | ended | time s | fill | what happened | acknowledged writes after "
      "remount | checker |\n"
      "|---|---|---|---:|---|---:|---:|---|---|---|\n";
  for (const Outcome& r : runs)
    t += "| " + r.filesystem + " | " + r.label + " | " + r.volume->label + " | " + r.size +
         (r.device_size != r.size ? " (" + r.device_size + " with a filler)" : "") + " | " +
         (r.error.empty() ? "finished" : r.enospc ? "ENOSPC" : "FAILED: " + r.error) + " | " + fixed(r.seconds, 3) +
         " | " + fixed(100 * r.fill, 1) + "% | " + r.detail + " | " + (r.intact ? "intact: " : "LOST: ") + r.check +
         " | " + (r.fsck_clean ? "clean" : "NOT CLEAN") + " |\n";
  t += "\nTime: to finish, or to fail (for untar: the failing copy). Fill: used blocks over all blocks "
       "(root may use the reserve; an XFS filler file counts as used). Checker: e2fsck -fn, xfs_repair -n, btrfs "
       "check --readonly.\n";
  t += "\n## untar, copy by copy\n\nWhat the server saw while each copy ran: commits, time the "
       "journal was full (free space below a quarter), and MiB written to the volume by class (journal blocks, "
       "checkpoint: journalled metadata written home, data). The last copy of each volume is the one that "
       "failed. Commits: jbd2 transactions (ext4), log records (XFS); btrfs has no journal.\n\n"
       "| filesystem | volume | copy | time s | commits | journal full s | journal MiB | checkpoint MiB | data MiB |\n"
       "|---|---|---:|---:|---:|---:|---:|---:|---:|\n";
  for (const Outcome& r : runs)
    for (std::size_t i = 0; i < r.copies.size(); ++i) {
      const Copy& c = r.copies[i];
      t += "| " + r.filesystem + " | " + r.volume->label + " | " + std::to_string(i + 1) + " | " + fixed(c.seconds, 3) + " | " +
           std::to_string(c.transactions) + " | " + fixed(c.journal_full_s, 3) + " | " + fixed(c.journal_mib, 2) + " | " +
           fixed(c.checkpoint_mib, 2) + " | " + fixed(c.data_mib, 2) + " |\n";
    }
  return t;
}

void draw(const fs::path& out, const std::vector<Outcome>& runs, const std::vector<std::string>& filesystems,
          const std::vector<Volume>& volumes) {
  // One series per filesystem and volume model.
  struct Series {
    std::string filesystem;
    const Volume* volume;
    std::string key() const { return filesystem + "-" + volume->key; }
    std::string title() const { return filesystem + ", " + volume->label; }
  };
  std::vector<Series> series;  // those that ran
  for (const auto& f : filesystems)
    for (const auto& v : volumes)
      for (const Outcome& o : runs)
        if (o.filesystem == f && o.volume == &v) {
          series.push_back({f, &v});
          break;
        }
  const auto outcome = [&](const Series& x, const std::string& test) -> const Outcome* {
    for (const Outcome& o : runs)
      if (o.filesystem == x.filesystem && o.volume == x.volume && o.test == test) return &o;
    return nullptr;
  };
  // Time and fill per test, one bar per series.
  std::string dat = "# test";
  for (const auto& x : series) dat += " " + x.key() + "-seconds " + x.key() + "-fill";
  dat += "\n";
  for (const Outcome& r : runs) {
    if (r.filesystem != series.front().filesystem || r.volume != series.front().volume) continue;
    dat += "\"" + r.label + "\"";
    for (const auto& x : series) {
      const Outcome* o = outcome(x, r.test);
      dat += o ? ' ' + fixed(o->seconds, 4) + ' ' + fixed(100 * o->fill, 2) : std::string(" NaN NaN");
    }
    dat += "\n";
  }
  write_report_file(out, "runs.dat", dat);
  std::string bars, fills;
  for (std::size_t i = 0; i < series.size(); ++i) {
    bars += std::string(i ? ", '' " : "'runs.dat' ") + "using " + std::to_string(2 + 2 * i) +
            (i ? "" : ":xtic(1)") + " title '" + series[i].title() + "'";
    fills += std::string(i ? ", '' " : "'runs.dat' ") + "using " + std::to_string(3 + 2 * i) +
             (i ? "" : ":xtic(1)") + " title '" + series[i].title() + "'";
  }
  const std::string style =
      "set style data histograms\nset style histogram clustered gap 1\nset style fill solid 0.8 border -1\n"
      "set key top left font ',8'\nset xtics rotate by -20 font ',9'\nset grid ytics\n";
  plot(out, "time", "set title 'time to finish or to fail'\nset ylabel 'seconds'\nset logscale y\n" + style +
                        "plot " + bars);
  plot(out, "fill", "set title 'fill level reached'\nset ylabel 'percent of blocks in use'\nset yrange [0:105]\n" +
                        style + "plot " + fills);
  // Untar: each copy's time as the volume fills.
  std::string copies = "# copy";
  for (const auto& x : series) copies += " " + x.key();
  copies += "\n";
  std::size_t most = 0;
  for (const Outcome& r : runs) most = std::max(most, r.copies.size());
  for (std::size_t c = 0; c < most; ++c) {
    copies += std::to_string(c + 1);
    for (const auto& x : series) {
      const Outcome* o = outcome(x, "untar");
      copies += ' ' + (o != nullptr && c < o->copies.size() ? fixed(o->copies[c].seconds, 4) : std::string("NaN"));
    }
    copies += "\n";
  }
  write_report_file(out, "untar.dat", copies);
  std::string lines;
  for (std::size_t i = 0; i < series.size(); ++i)
    lines += std::string(i ? ", " : "") + "'untar.dat' using 1:" + std::to_string(2 + i) +
             " with linespoints lw 2 title '" + series[i].title() + "'";
  plot(out, "untar", "set title 'untar, copy after copy until the volume is full (the last one fails)'\n"
                     "set xlabel 'copy'\nset ylabel 'seconds'\nset grid\nset yrange [0:*]\nset key top left\nplot " +
                         lines);
}

}  // namespace

int enospc2015(const ExperimentOptions& options) {
  static const std::vector<Volume> volumes = {{"ram", "RAM (nvram model)", "nvram"},
                                              {"disk", "disk (hdd model)", "hdd"}};
  Sizes sizes{"256M", "16M", "256M", "128M", "32M", 1000, 40, 9};
  if (options.quick) sizes = Sizes{"256M", "16M", "48M", "128M", "32M", 300, 15, 2};
  const std::vector<std::string> filesystems =
      options.filesystems.empty() ? std::vector<std::string>{"ext4", "xfs", "btrfs"} : options.filesystems;
  std::printf("enospc2015: small volumes (RAM-like and disk), filled by dd, by untarring a %u-file tree until "
              "full, and by 1000 parallel writers; time to fail, fill, acknowledged writes checked after a remount; "
              "on",
              sizes.tree_files);
  for (const auto& f : filesystems) std::printf(" %s", f.c_str());
  std::printf("\n");
  std::fflush(stdout);
  fs::create_directories(options.run_dir);
  const fs::path source = options.run_dir / "dd-source";
  std::uint64_t state = 20;
  write_random_file(source, 20ull << 20, state);
  const fs::path archive = make_tree_archive(options.run_dir, sizes.tree_files, sizes.tree_dirs);

  std::vector<Outcome> runs;
  const auto volumes_of = [&](const std::string& f) {
    std::vector<const Volume*> of;
    for (const Volume& v : volumes)
      if (!options.quick || f == "ext4" || &v == &volumes.front()) of.push_back(&v);
    return of;
  };
  std::uint64_t total = 0;
  for (const std::string& f : filesystems) total += 5 * volumes_of(f).size();
  {
    workloads::ProgressLine bar(stderr, "runs");
    for (const std::string& f : filesystems)
      for (const Volume* volume : volumes_of(f)) {
        const Volume& v = *volume;
        const fs::path dir = options.run_dir / f / v.key;
        const auto next = [&](Outcome r) {
          runs.push_back(std::move(r));
          bar.update(runs.size(), total);
          if (options.interrupted != nullptr && *options.interrupted != 0) throw std::runtime_error("interrupted");
        };
        next(run_dd(dir / "dd-far", f, v, sizes.dd_far, source, false));
        next(run_dd(dir / "dd-over", f, v, sizes.dd_over, source, true));
        next(run_untar(dir / "untar", f, v, sizes.untar, archive));
        next(run_writers(dir / "writers-far", f, v, sizes.writers_far, sizes.writer_rounds, false));
        next(run_writers(dir / "writers-over", f, v, sizes.writers_over, 1, true));
        write_report_json(options.out, "results.json", results_json(runs, options.quick));
      }
  }
  write_report_json(options.out, "results.json", results_json(runs, options.quick));
  const std::string table = table_md(runs);
  write_report_file(options.out, "table.md", table);
  draw(options.out, runs, filesystems, volumes);
  std::printf("\n%s\nResults in %s (results.json, table.md, time.png/svg, fill.png/svg, untar.png/svg)\n",
              table.c_str(), options.out.c_str());
  for (const Outcome& r : runs)
    if (!r.intact || !r.fsck_clean) return 1;
  return 0;
}

}  // namespace nvj::cli
