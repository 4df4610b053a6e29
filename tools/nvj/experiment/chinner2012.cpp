// SPDX-License-Identifier: BSD-3-Clause
// E3, Chinner 2012 (ext4 against XFS, many threads creating large files):
// ext4 interleaves allocations file by file per writeback pass (many
// extents per file, writes close to sequential), XFS preallocates
// speculatively (few extents per file, more seeking while writing, faster
// reads). Scaled to this machine: 8 to 64 threads each writing one file,
// 2 GiB in all (256 MiB to 32 MiB per file; --quick: 4 and 16 threads, 256
// MiB), onto a disk model. Per point, on a freshly made filesystem: the
// throughput to the disk (until sync returns), and the device's view while
// writing: requests and their mean size, the sequential fraction, the
// seeks and their distances, the disk's busy time; then extents per file
// (filefrag) and the read-back rate of all files from a cold cache, with
// its seeks.
//
// The seed's machine had 4 GB of memory for 48 GB and more of files, so
// writeback ran while the threads wrote and interleaved their allocations.
// Here 2 GiB fits in the page cache many times over; for the write phase
// the host's dirty-page limits are scaled down as the seed's memory was
// (vm.dirty_background_bytes 16 MiB, vm.dirty_bytes 64 MiB: writeback
// starts after 1/128 of the data, and writers wait for it after 1/32), and
// put back as they were afterwards, whatever happens.
#include <cstdio>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "tools/nvj/experiment/disk_view.h"
#include "tools/nvj/experiment/experiment.h"
#include "tools/nvj/experiment/report.h"
#include "tools/nvj/host/files/text_file.h"
#include "tools/nvj/host/files/text_pattern.h"
#include "tools/nvj/host/processes/process.h"
#include "tools/nvj/testbed/testbed.h"
#include "tools/workloads/progress_line.h"

namespace nvj::cli {
namespace fs = std::filesystem;
namespace {

struct ChinnerPlan {
  std::vector<std::uint32_t> threads;
  std::uint64_t total_mib;
  std::string disk;
};

// What the disk did while a phase ran (GET /stats after POST /reset-stats).
struct DiskView : DiskCounts {
  double seconds = 0;
  std::uint64_t requests = 0, bytes = 0;  // writes while writing, reads while reading
  double mib_per_second() const { return seconds > 0 ? static_cast<double>(bytes) / (1 << 20) / seconds : 0; }
  double mean_request_kib() const {
    return requests ? static_cast<double>(bytes) / 1024 / static_cast<double>(requests) : 0;
  }
};

struct ChinnerPoint {
  std::string filesystem;
  std::uint32_t threads = 0;
  std::uint64_t file_mib = 0;
  DiskView write, read;
  double extents_mean = 0;
  std::uint64_t extents_max = 0;
  bool check_clean = false;
};

DiskView disk_view(const Testbed& lab, bool writing, double seconds) {
  DiskView v;
  static_cast<DiskCounts&>(v) = disk_counts(lab);
  v.seconds = seconds;
  v.requests = writing ? v.writes : v.reads;
  v.bytes = writing ? v.write_bytes : v.read_bytes;
  return v;
}

// The host's dirty-page limits, scaled down for as long as it lives.
class DirtyLimits {
 public:
  DirtyLimits() {
    for (const char* name : kNames) saved_.push_back(read_text_file(std::string(kDir) + name));
    try {
      write("dirty_background_bytes", "16777216");
      write("dirty_bytes", "67108864");
    } catch (...) {
      restore();
      throw;
    }
  }
  ~DirtyLimits() { restore(); }
  DirtyLimits(const DirtyLimits&) = delete;
  DirtyLimits& operator=(const DirtyLimits&) = delete;

 private:
  static constexpr const char* kDir = "/proc/sys/vm/";
  static constexpr const char* kNames[4] = {"dirty_background_bytes", "dirty_background_ratio", "dirty_bytes",
                                            "dirty_ratio"};
  static void write(const std::string& name, const std::string& value) {
    run_checked({"sh", "-c", "printf '%s' \"$1\" >\"$2\"", "write", value, std::string(kDir) + name});
  }
  // Of each pair (bytes, ratio) one is in force, the other 0; writing the
  // one in force sets the other to 0 again.
  void restore() noexcept {
    try {
      for (std::size_t i = 0; i < 4; i += 2) {
        const std::size_t in_force = saved_[i] != "0\n" ? i : i + 1;
        write(kNames[in_force], saved_[in_force]);
      }
    } catch (const std::exception& e) {
      std::fprintf(stderr, "chinner2012: could not restore the dirty-page limits: %s\n", e.what());
    }
  }
  std::vector<std::string> saved_;
};

double timed_shell(const std::string& script, const std::vector<std::string>& args) {
  std::vector<std::string> argv{"sh", "-c", script, "chinner2012"};
  argv.insert(argv.end(), args.begin(), args.end());
  return timed(argv);
}

ChinnerPoint measure(const std::string& filesystem, std::uint32_t threads, const ChinnerPlan& plan, const fs::path& run_dir) {
  Testbed lab(one_disk(run_dir, plan.disk, filesystem));
  ChinnerPoint p;
  p.filesystem = filesystem;
  p.threads = threads;
  p.file_mib = plan.total_mib / threads;
  const std::string dir = (lab.mount_point() / "files").string();
  fs::create_directory(dir);
  lab.post("/reset-stats");
  // Every thread a file of its own, written in 1 MiB pieces through the
  // page cache, all at once; done when sync returns.
  {
    const DirtyLimits limits;
    p.write = disk_view(lab, true,
                      timed_shell("i=0; while [ $i -lt \"$2\" ]; do "
                                  "dd if=/dev/zero of=\"$1/file$i\" bs=1M count=\"$3\" status=none & i=$((i + 1)); "
                                  "done; wait; sync",
                                  {dir, std::to_string(threads), std::to_string(p.file_mib)}));
  }
  for (std::uint32_t i = 0; i < threads; ++i) {
    const std::string frag = run_checked({"filefrag", dir + "/file" + std::to_string(i)});
    const auto m = TextPattern(R"((\d+) extents? found)").search(frag);
    if (!m) throw std::runtime_error("filefrag said: " + frag);
    const std::uint64_t n = std::stoull(m->groups[1]);
    p.extents_mean += static_cast<double>(n) / threads;
    p.extents_max = std::max(p.extents_max, n);
  }
  cold_cache(lab);
  lab.post("/reset-stats");
  p.read = disk_view(lab, false,
                     timed_shell("for f in \"$1\"/file*; do cat \"$f\" >/dev/null & done; wait", {dir}));
  lab.unmount();
  p.check_clean = lab.check().status == 0;
  if (!lab.teardown()) throw std::runtime_error("teardown failed (see above)");
  return p;
}

Json view_json(const DiskView& v) {
  return Json{{"seconds", json_round(v.seconds, 4)},
              {"mib_per_second", json_round(v.mib_per_second(), 2)},
              {"requests", v.requests},
              {"bytes", v.bytes},
              {"mean_request_kib", json_round(v.mean_request_kib(), 1)},
              {"sequential_fraction", json_round(v.sequential, 4)},
              {"seeks", v.seeks},
              {"mean_seek_cylinders", json_round(v.mean_seek(), 1)},
              {"seek_distance", seek_distance_json(v.seek_distance)},
              {"device_ms", json_round(v.device_ms, 3)}};
}

Json results_json(const std::vector<ChinnerPoint>& points, const ChinnerPlan& plan, bool quick) {
  Json list = Json::array();
  for (const ChinnerPoint& p : points)
    list.push_back(Json{{"filesystem", p.filesystem},
                        {"threads", p.threads},
                        {"file_mib", p.file_mib},
                        {"write", view_json(p.write)},
                        {"extents_per_file_mean", json_round(p.extents_mean, 2)},
                        {"extents_per_file_max", p.extents_max},
                        {"read", view_json(p.read)},
                        {"check_clean", p.check_clean}});
  return Json{{"experiment", "chinner2012"},
              {"quick", quick},
              {"total_mib", plan.total_mib},
              {"disk", plan.disk + " hdd"},
              {"points", list}};
}

std::string table_md(const std::vector<ChinnerPoint>& points, const ChinnerPlan& plan) {
  std::string t = "# chinner2012: threads each writing one file, " + std::to_string(plan.total_mib) +
                  " MiB in all, onto a " + plan.disk +
                  " disk model; then read back from a cold cache\n\n"
                  "| filesystem | threads | file MiB | write MiB/s | requests | mean request KiB | sequential | "
                  "seeks | mean seek (cylinders) | disk busy s | extents/file (max) | read MiB/s | read seeks |\n"
                  "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
  for (const ChinnerPoint& p : points) {
    t += "| " + p.filesystem + " | " + std::to_string(p.threads) + " | " + std::to_string(p.file_mib) + " | " +
         fixed(p.write.mib_per_second(), 1) + " | " + std::to_string(p.write.requests) + " | " +
         fixed(p.write.mean_request_kib(), 0) + " | " + fixed(100 * p.write.sequential, 1) + "% | " +
         std::to_string(p.write.seeks) + " | " + fixed(p.write.mean_seek(), 0) + " | " + fixed(p.write.device_ms / 1000, 2) +
         " | " + fixed(p.extents_mean, 1) + " (" + std::to_string(p.extents_max) + ") | " +
         fixed(p.read.mib_per_second(), 1) + " | " + std::to_string(p.read.seeks) + " |\n";
  }
  t += "\nWrite MiB/s: all files' bytes over the time until sync returned. Requests, their mean size, the "
       "sequential fraction, seeks and disk busy time (seek, rotation, transfer, destaging the drive's cache) "
       "are the disk model's, for the writes; extents per file from filefrag; read: all files at once from a "
       "cold cache. Checked after each point:";
  for (const ChinnerPoint& p : points)
    t += " " + p.filesystem + "/" + std::to_string(p.threads) + " " + (p.check_clean ? "clean" : "NOT CLEAN") + ";";
  t.back() = '\n';
  return t;
}

void draw(const fs::path& out, const std::vector<ChinnerPoint>& points, const std::vector<std::string>& filesystems,
          const ChinnerPlan& plan) {
  std::string dat = "# threads, then per filesystem: write MiB/s, read MiB/s, extents per file, write seeks\n# threads";
  for (const auto& f : filesystems) dat += " " + f + "-write " + f + "-read " + f + "-extents " + f + "-seeks";
  dat += "\n";
  for (std::uint32_t n : plan.threads) {
    dat += std::to_string(n);
    for (const auto& f : filesystems) {
      const ChinnerPoint* found = nullptr;
      for (const ChinnerPoint& p : points)
        if (p.filesystem == f && p.threads == n) found = &p;
      dat += found ? ' ' + fixed(found->write.mib_per_second(), 2) + ' ' + fixed(found->read.mib_per_second(), 2) +
                         ' ' + fixed(found->extents_mean, 2) + ' ' + std::to_string(found->write.seeks)
                   : std::string(" NaN NaN NaN NaN");
    }
    dat += "\n";
  }
  write_report_file(out, "points.dat", dat);
  const auto curves = [&](int column, const std::string& what) {
    std::string s;
    for (std::size_t i = 0; i < filesystems.size(); ++i)
      s += std::string(i ? ", " : "") + "'points.dat' using 1:" + std::to_string(2 + 4 * static_cast<int>(i) + column) +
           " with linespoints lw 2 title '" + filesystems[i] + what + "'";
    return s;
  };
  const std::string x = "set xlabel 'threads'\nset logscale x 2\nset grid\nset key top left\nset yrange [0:*]\n";
  plot(out, "throughput", "set title 'write (until sync) and read-back rate'\nset ylabel 'MiB/s'\n" + x + "plot " +
                              curves(0, " write") + ", " + curves(1, " read"));
  plot(out, "extents", "set title 'extents per file (filefrag)'\nset ylabel 'extents'\n" + x + "plot " + curves(2, ""));
  // The write's seek distances at the most threads, per filesystem.
  std::string hist = "# distance up to (cylinders), then per filesystem: seeks\n";
  std::map<std::uint64_t, std::vector<std::uint64_t>> rows;
  for (std::size_t i = 0; i < filesystems.size(); ++i)
    for (const ChinnerPoint& p : points)
      if (p.filesystem == filesystems[i] && p.threads == plan.threads.back())
        for (const auto& [bound, count] : p.write.seek_distance) {
          auto& row = rows[bound];
          row.resize(filesystems.size(), 0);
          row[i] = count;
        }
  for (auto& [bound, row] : rows) {
    row.resize(filesystems.size(), 0);
    hist += std::to_string(bound);
    for (std::uint64_t c : row) hist += ' ' + std::to_string(c);
    hist += "\n";
  }
  write_report_file(out, "seek_distance.dat", hist);
  std::string bars;
  for (std::size_t i = 0; i < filesystems.size(); ++i)
    bars += std::string(i ? ", '' " : "'seek_distance.dat' ") + "using " + std::to_string(2 + i) +
            (i ? "" : ":xtic(1)") + " title '" + filesystems[i] + "'";
  plot(out, "seek_distance",
       "set title 'seeks while writing, by distance, " + std::to_string(plan.threads.back()) +
           " threads'\nset xlabel 'distance up to (cylinders)'\nset ylabel 'seeks'\nset style data histograms\n"
           "set style histogram clustered gap 1\nset style fill solid 0.8 border -1\nset key top right\n"
           "set xtics rotate by -45 font ',8'\nset grid ytics\nset yrange [0:*]\nplot " +
           (rows.empty() ? std::string("0 notitle") : bars));
}

}  // namespace

int chinner2012(const ExperimentOptions& options) {
  ChinnerPlan plan{{8, 16, 32, 64}, 2048, "4G"};
  if (options.quick) plan = ChinnerPlan{{4, 16}, 256, "1G"};
  const std::vector<std::string> filesystems =
      options.filesystems.empty() ? std::vector<std::string>{"ext4", "xfs"} : options.filesystems;
  std::printf("chinner2012: %u to %u threads each writing one file, %llu MiB in all, onto a %s disk model; "
              "throughput, the disk's view, extents per file, read-back; on",
              plan.threads.front(), plan.threads.back(), static_cast<unsigned long long>(plan.total_mib),
              plan.disk.c_str());
  for (const auto& f : filesystems) std::printf(" %s", f.c_str());
  std::printf("\n");
  std::fflush(stdout);
  std::vector<ChinnerPoint> points;
  {
    workloads::ProgressLine bar(stderr, "points");
    for (const std::string& f : filesystems)
      for (std::uint32_t n : plan.threads) {
        if (options.interrupted != nullptr && *options.interrupted != 0) throw std::runtime_error("interrupted");
        points.push_back(measure(f, n, plan, options.run_dir / (f + "-" + std::to_string(n))));
        bar.update(points.size(), filesystems.size() * plan.threads.size());
        write_report_json(options.out, "results.json", results_json(points, plan, options.quick));
      }
  }
  const std::string table = table_md(points, plan);
  write_report_file(options.out, "table.md", table);
  draw(options.out, points, filesystems, plan);
  std::printf("\n%s\nResults in %s (results.json, table.md, throughput.png/svg, extents.png/svg, "
              "seek_distance.png/svg)\n",
              table.c_str(), options.out.c_str());
  for (const ChinnerPoint& p : points)
    if (!p.check_clean) return 1;
  return 0;
}

}  // namespace nvj::cli
