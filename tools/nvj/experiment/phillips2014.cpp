// SPDX-License-Identifier: BSD-3-Clause
// E4, Phillips 2014 (Tux3's "directory packing" against ext4, XFS and
// btrfs): untar a source-like tree onto a spinning disk, drop every cache,
// then list it (ls -R) and read it all back (tar c), each timed on the disk
// model. How well a filesystem packs directories, inodes and the files of a
// directory together shows in the seeks: per operation, the server counts
// the disk's arm movements, their distances and the time they cost.
//
// Each filesystem gets a server of its own with the same disk model (data
// only: ext4 with its journal inside, XFS with its log inside, btrfs), made
// fresh. Between the phases the filesystem is unmounted, this host's page
// cache dropped (and the loop device's buffers flushed) and mounted again,
// so the reads come from the disk.
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include "tools/nvj/experiment/disk_view.h"
#include "tools/nvj/experiment/experiment.h"
#include "tools/nvj/experiment/report.h"
#include "tools/nvj/experiment/source_tree.h"
#include "tools/nvj/host/fs_tools/filesystem_tools.h"
#include "tools/nvj/host/processes/process.h"
#include "tools/nvj/testbed/testbed.h"
#include "tools/workloads/progress_line.h"

namespace nvj::cli {
namespace fs = std::filesystem;
namespace {

struct PhillipsPlan {
  std::uint32_t files, folders;
  std::string disk;  // the data export's size
};

// What the disk did during one phase (GET /stats after POST /reset-stats).
struct Phase : DiskCounts {
  std::string name;  // untar, ls -R, tar c
  double seconds = 0;
};

struct FsRun {
  std::string filesystem;
  std::vector<Phase> phases;
  bool check_clean = false;
  std::string checker;
};

Phase disk_phase(const Testbed& lab, const std::string& name, double seconds) {
  Phase p;
  static_cast<DiskCounts&>(p) = disk_counts(lab);
  p.name = name;
  p.seconds = seconds;
  return p;
}

FsRun measure(const std::string& filesystem, const PhillipsPlan& plan, const fs::path& archive, const fs::path& run_dir) {
  Testbed lab(one_disk(run_dir, plan.disk, filesystem));
  FsRun r{filesystem, {}, false, quote(fsck_command(filesystem, lab.data_device(), ""))};
  const std::string tree = (lab.mount_point() / "src").string();
  fs::create_directory(tree);
  lab.post("/reset-stats");
  // The untar ends when it is on the disk.
  const double untar = timed({"sh", "-c", "tar -xf \"$1\" -C \"$2\" && sync", "untar", archive.string(), tree});
  r.phases.push_back(disk_phase(lab, "untar", untar));
  cold_cache(lab);
  lab.post("/reset-stats");
  r.phases.push_back(disk_phase(lab, "ls -R", timed({"sh", "-c", "ls -R \"$1\" >/dev/null", "ls", tree})));
  cold_cache(lab);
  lab.post("/reset-stats");
  // Through a pipe: GNU tar skips reading the files when it writes to /dev/null itself.
  r.phases.push_back(
      disk_phase(lab, "tar c", timed({"sh", "-c", "tar -cf - -C \"$1\" . | cat >/dev/null", "tar", tree})));
  lab.unmount();
  r.check_clean = lab.check().status == 0;
  if (!lab.teardown()) throw std::runtime_error("teardown failed (see above)");
  return r;
}

Json results_json(const std::vector<FsRun>& runs, const PhillipsPlan& plan, bool quick) {
  Json list = Json::array();
  for (const FsRun& r : runs) {
    Json phases = Json::array();
    for (const Phase& p : r.phases) {
      phases.push_back(Json{{"operation", p.name},
                            {"seconds", json_round(p.seconds, 4)},
                            {"reads", p.reads},
                            {"read_bytes", p.read_bytes},
                            {"writes", p.writes},
                            {"write_bytes", p.write_bytes},
                            {"seeks", p.seeks},
                            {"seeks_per_100_files", json_round(100.0 * static_cast<double>(p.seeks) / plan.files, 2)},
                            {"mean_seek_cylinders", json_round(p.mean_seek(), 1)},
                            {"seek_distance", seek_distance_json(p.seek_distance)},
                            {"device_ms", json_round(p.device_ms, 3)}});
    }
    list.push_back(Json{{"filesystem", r.filesystem}, {"checker", r.checker}, {"check_clean", r.check_clean},
                        {"phases", phases}});
  }
  return Json{{"experiment", "phillips2014"},
              {"quick", quick},
              {"tree", {{"files", plan.files}, {"folders", plan.folders}}},
              {"disk", plan.disk + " hdd"},
              {"filesystems", list}};
}

std::string table_md(const std::vector<FsRun>& runs, const PhillipsPlan& plan) {
  std::string t = "# phillips2014: a " + std::to_string(plan.files) + "-file tree in " +
                  std::to_string(plan.folders) + " folders on a " + plan.disk +
                  " disk model: untar (and sync), then ls -R and tar c from a cold cache\n\n"
                  "| filesystem | operation | time s | reads | MiB read | writes | MiB written | seeks | "
                  "seeks per 100 files | mean seek (cylinders) | disk busy s |\n"
                  "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
  constexpr double kBytesPerMiB = 1 << 20;
  for (const FsRun& r : runs)
    for (const Phase& p : r.phases)
      t += "| " + r.filesystem + " | " + p.name + " | " + fixed(p.seconds, 3) + " | " + std::to_string(p.reads) +
           " | " + fixed(static_cast<double>(p.read_bytes) / kBytesPerMiB, 1) + " | " + std::to_string(p.writes) + " | " +
           fixed(static_cast<double>(p.write_bytes) / kBytesPerMiB, 1) + " | " + std::to_string(p.seeks) + " | " +
           fixed(100.0 * static_cast<double>(p.seeks) / plan.files, 1) + " | " + fixed(p.mean_seek(), 0) + " | " +
           fixed(p.device_ms / 1000, 3) + " |\n";
  t += "\nSeeks: the arm's movements for requests (a write the drive's cache takes moves nothing until it is "
       "destaged). Disk busy: the model's seek, rotation and transfer time for the phase's requests, and its time "
       "destaging the cache. After each filesystem, its checker:";
  for (const FsRun& r : runs) t += " " + r.checker + " " + (r.check_clean ? "clean" : "NOT CLEAN") + ";";
  t.back() = '\n';
  return t;
}

void draw(const fs::path& out, const std::vector<FsRun>& runs, const PhillipsPlan& plan) {
  std::string dat = "# operation, then per filesystem: seconds, seeks per 100 files\n# operation";
  for (const FsRun& r : runs) dat += " " + r.filesystem + "-seconds " + r.filesystem + "-seeks";
  dat += "\n";
  for (std::size_t i = 0; i < runs.front().phases.size(); ++i) {
    dat += "\"" + runs.front().phases[i].name + "\"";
    for (const FsRun& r : runs)
      dat += ' ' + fixed(r.phases[i].seconds, 4) + ' ' +
             fixed(100.0 * static_cast<double>(r.phases[i].seeks) / plan.files, 3);
    dat += "\n";
  }
  write_report_file(out, "phases.dat", dat);
  const auto bars = [&](int column) {
    std::string s;
    for (std::size_t i = 0; i < runs.size(); ++i)
      s += std::string(i ? ", '' " : "'phases.dat' ") + "using " + std::to_string(2 + 2 * static_cast<int>(i) + column) +
           (i ? "" : ":xtic(1)") + " title '" + runs[i].filesystem + "'";
    return s;
  };
  const std::string style =
      "set style data histograms\nset style histogram clustered gap 1\nset style fill solid 0.8 border -1\n"
      "set key top left\nset grid ytics\nset yrange [0:*]\n";
  plot(out, "time", "set title 'time on the disk model (cold cache for ls -R and tar c)'\nset ylabel 'seconds'\n" +
                        style + "plot " + bars(0));
  plot(out, "seeks", "set title 'seeks per 100 files'\nset ylabel 'seeks'\n" + style + "plot " + bars(1));
}

}  // namespace

int phillips2014(const ExperimentOptions& options) {
  PhillipsPlan plan{10000, 1000, "2G"};
  if (options.quick) plan = PhillipsPlan{2000, 200, "1G"};
  const std::vector<std::string> filesystems =
      options.filesystems.empty() ? std::vector<std::string>{"ext4", "xfs", "btrfs"} : options.filesystems;
  std::printf("phillips2014: a %u-file source-like tree in %u folders, untarred onto a %s disk model, then ls -R "
              "and tar c from a cold cache, on",
              plan.files, plan.folders, plan.disk.c_str());
  for (const auto& f : filesystems) std::printf(" %s", f.c_str());
  std::printf("\n");
  std::fflush(stdout);
  fs::create_directories(options.run_dir);
  const fs::path archive = make_tree_archive(options.run_dir, plan.files, plan.folders);
  std::vector<FsRun> runs;
  {
    workloads::ProgressLine bar(stderr, "filesystems");
    for (const std::string& f : filesystems) {
      if (options.interrupted != nullptr && *options.interrupted != 0) throw std::runtime_error("interrupted");
      runs.push_back(measure(f, plan, archive, options.run_dir / f));
      bar.update(runs.size(), filesystems.size());
      // What is measured so far is kept, should a later filesystem fail.
      write_report_json(options.out, "results.json", results_json(runs, plan, options.quick));
    }
  }
  const std::string table = table_md(runs, plan);
  write_report_file(options.out, "table.md", table);
  draw(options.out, runs, plan);
  std::printf("\n%s\nResults in %s (results.json, table.md, time.png/svg, seeks.png/svg)\n", table.c_str(),
              options.out.c_str());
  for (const FsRun& r : runs)
    if (!r.check_clean) return 1;
  return 0;
}

}  // namespace nvj::cli
