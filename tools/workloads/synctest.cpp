// SPDX-License-Identifier: BSD-3-Clause
#include "tools/workloads/synctest.h"

#include <fcntl.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <functional>
#include <random>
#include <stdexcept>
#include <system_error>
#include <vector>

#include "common/mark_client.h"
#include "crashlab/facts/fact.h"
#include "tools/workloads/fact_poster.h"

namespace nvj::workloads {
namespace fs = std::filesystem;
namespace {

constexpr std::uint32_t kRenames = 3;

std::uint64_t process_seed(const SynctestOptions& o, std::uint32_t process) {
  return o.seed * 0x9E3779B97F4A7C15ull + process;
}

// An exponential draw with the given mean, from 53 random bits (the same on
// every standard library, unlike std::exponential_distribution).
double exponential(std::mt19937_64& rng, double mean) {
  const double u = static_cast<double>(rng() >> 11) * 0x1.0p-53;  // [0, 1)
  return -std::log1p(-u) * mean;
}

std::vector<std::uint64_t> sizes_of(const SynctestOptions& o, std::uint32_t process) {
  std::mt19937_64 rng(process_seed(o, process));
  const double mean = static_cast<double>(o.mean_size - o.min_size);
  std::vector<std::uint64_t> sizes(o.passes);
  for (auto& s : sizes) {
    double x;
    do x = static_cast<double>(o.min_size) + exponential(rng, mean);
    while (x > static_cast<double>(o.max_size));
    s = static_cast<std::uint64_t>(x);
  }
  return sizes;
}

std::string file_name(std::uint32_t process, std::uint32_t pass, std::uint32_t renames) {
  std::string n = 'p' + std::to_string(process);
  n += '-';
  n += std::to_string(pass);
  if (renames > 0) n += ".r" + std::to_string(renames);
  return n;
}

std::uint64_t elapsed_ns(std::chrono::steady_clock::time_point since) {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - since).count());
}

void validate(const SynctestOptions& o) {
  const auto bad = [](const std::string& what) { throw std::invalid_argument(what); };
  if (o.directory.empty()) bad("no directory given");
  if (o.processes == 0) bad("--processes must be at least 1");
  if (o.per_directory == 0 || o.per_directory > o.processes)
    bad("--per-dir must be between 1 and --processes (" + std::to_string(o.processes) + "): give --per-dir " +
        std::to_string(o.processes) + " or fewer, or --processes " + std::to_string(std::max(o.per_directory, 1u)) +
        " or more");
  if (o.passes == 0) bad("--passes must be at least 1");
  if (o.min_size > o.max_size) bad("--min-size must not exceed --max-size");
  if (o.mean_size <= o.min_size || o.mean_size > o.max_size)
    bad("--mean-size must be above --min-size and at most --max-size");
}


// What one process does. Its report: files, operations, bytes, then the
// numbers of file and directory fsyncs, then their latencies in ns.
void run_process(const SynctestOptions& o, const FactPoster& facts, std::uint32_t process, TaskChannel& channel) {
  const std::string dir_name = 'd' + std::to_string(process / o.per_directory);
  const fs::path dir = fs::path(o.directory) / dir_name;
  const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0) throw TaskError("open " + dir.string(), errno);
  const auto sizes = sizes_of(o, process);
  std::vector<unsigned char> content(o.max_size);
  std::mt19937_64 pattern(process_seed(o, process) ^ 0xC0FFEE);
  for (std::size_t i = 0; i + 8 <= content.size(); i += 8) {
    const std::uint64_t v = pattern();
    std::memcpy(content.data() + i, &v, 8);
  }
  std::uint64_t files = 0, operations = 0, bytes = 0;
  std::vector<std::uint64_t> file_syncs, dir_syncs;
  const auto fail = [&](const std::string& what, std::uint32_t pass) {
    throw TaskError(what + " (" + dir_name + ", pass " + std::to_string(pass) + ")", errno);
  };
  // What is durable when a call returns (a synchronous tree makes every
  // call so), and the facts that say it.
  const bool file_durable = o.fsync_file || o.sync_tree;
  const bool entry_durable = o.fsync_directory || o.sync_tree;
  const auto post = [&](const std::function<void()>& call, const std::string& what, std::uint32_t pass) {
    try {
      call();
    } catch (const MarkError& e) {
      errno = e.error() != 0 ? e.error() : EPROTO;
      fail("post fact " + what + ": " + e.what(), pass);
    }
  };
  const auto in_dir = [&](const std::string& file) { return (dir / file).string(); };
  const auto sync_directory = [&](std::uint32_t pass) {
    const auto t = std::chrono::steady_clock::now();
    if (::fsync(dfd) != 0) fail("fsync of the directory", pass);
    dir_syncs.push_back(elapsed_ns(t));
    ++operations;
  };
  for (std::uint32_t pass = 0; pass < o.passes; ++pass) {
    const std::string name = file_name(process, pass, 0);
    const int fd = ::openat(dfd, name.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0644);
    if (fd < 0) fail("create " + name, pass);
    ++operations;
    for (std::uint64_t done = 0; done < sizes[pass];) {
      const ssize_t w = ::write(fd, content.data() + done, sizes[pass] - done);
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) fail("write of " + std::to_string(sizes[pass]) + " bytes to " + name, pass);
      done += static_cast<std::uint64_t>(w);
    }
    ++operations;
    bytes += sizes[pass];
    if (o.fsync_file) {
      const auto t = std::chrono::steady_clock::now();
      if (::fsync(fd) != 0) fail("fsync of " + name, pass);
      file_syncs.push_back(elapsed_ns(t));
      ++operations;
    }
    if (file_durable && facts.enabled()) {
      const std::uint32_t crc = crashlab::fact_crc32c(content.data(), sizes[pass]);
      post([&] { facts.file(in_dir(name), sizes[pass], crc); }, "file " + name, pass);
    }
    if (::close(fd) != 0) fail("close of " + name, pass);
    if (o.fsync_directory) sync_directory(pass);
    if (entry_durable) post([&] { facts.entry(dir.string(), name); }, "entry " + name, pass);
    for (std::uint32_t r = 1; r <= kRenames; ++r) {
      const std::string from = file_name(process, pass, r - 1);
      const std::string to = file_name(process, pass, r);
      post([&] { facts.rename(in_dir(from), in_dir(to)); }, "rename " + from, pass);
      if (::renameat(dfd, from.c_str(), dfd, to.c_str()) != 0) fail("rename " + from + " to " + to, pass);
      ++operations;
      if (o.fsync_directory) sync_directory(pass);
      if (entry_durable) post([&] { facts.entry(dir.string(), to); }, "entry " + to, pass);
    }
    if (pass >= o.unlink_lag) {
      const std::string old = file_name(process, pass - o.unlink_lag, kRenames);
      post([&] { facts.remove(in_dir(old)); }, "remove " + old, pass);
      if (::unlinkat(dfd, old.c_str(), 0) != 0) fail("unlink " + old, pass);
      ++operations;
    }
    ++files;
    channel.progress();
  }
  ::close(dfd);
  const std::uint64_t head[5] = {files, operations, bytes, file_syncs.size(), dir_syncs.size()};
  channel.report(head, sizeof head);
  channel.report(file_syncs.data(), file_syncs.size() * sizeof(std::uint64_t));
  channel.report(dir_syncs.data(), dir_syncs.size() * sizeof(std::uint64_t));
}

}  // namespace

void set_sync_flag(const std::string& directory) {
  const fs::path dir(directory);
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) throw std::system_error(errno, std::generic_category(), "open " + dir.string());
  int flags = 0;
  const bool ok = ::ioctl(fd, FS_IOC_GETFLAGS, &flags) == 0 && ((flags |= FS_SYNC_FL), true) &&
                  ::ioctl(fd, FS_IOC_SETFLAGS, &flags) == 0;
  const int e = errno;
  ::close(fd);
  if (!ok)
    throw std::system_error(e, std::generic_category(),
                            "chattr +S " + dir.string() + " (needs a filesystem with inode flags)");
}

std::vector<std::uint64_t> synctest_file_sizes(const SynctestOptions& o, std::uint32_t process) {
  return sizes_of(o, process);
}

SynctestResult run_synctest(const SynctestOptions& o,
                            const std::function<void(std::uint64_t, std::uint64_t)>& on_progress) {
  validate(o);
  const FactPoster facts = o.control.empty() ? FactPoster() : FactPoster(o.control, o.fact_root);
  const fs::path top(o.directory);
  fs::create_directories(top);
  if (facts.enabled()) facts.relative(o.directory);  // a tree outside the root is refused before any task runs
  if (o.sync_tree) set_sync_flag(top);
  for (std::uint32_t d = 0; d < o.directories(); ++d) {
    const fs::path dir = top / ('d' + std::to_string(d));
    fs::create_directories(dir);
    if (!fs::is_empty(dir)) throw std::invalid_argument(dir.string() + " is not empty (files of an earlier run?)");
    if (o.sync_tree) set_sync_flag(dir);
  }
  const std::uint64_t total = std::uint64_t{o.processes} * o.passes;
  const TaskOutcome out = run_tasks(
      o.processes, [&](std::uint32_t i, TaskChannel& c) { run_process(o, facts, i, c); },
      [&](std::uint64_t done) {
        if (on_progress) on_progress(done, total);
      });
  SynctestResult r;
  r.seconds = out.seconds;
  r.failure = out.failure;
  std::vector<std::uint64_t> file_syncs, dir_syncs;
  for (const std::string& report : out.reports) {
    std::uint64_t head[5];
    if (report.size() < sizeof head) continue;  // a task that did not finish
    std::memcpy(head, report.data(), sizeof head);
    if (report.size() != sizeof head + (head[3] + head[4]) * sizeof(std::uint64_t)) continue;
    r.files += head[0];
    r.operations += head[1];
    r.bytes += head[2];
    const char* p = report.data() + sizeof head;
    for (std::uint64_t i = 0; i < head[3] + head[4]; ++i, p += 8) {
      std::uint64_t v;
      std::memcpy(&v, p, 8);
      (i < head[3] ? file_syncs : dir_syncs).push_back(v);
    }
  }
  r.fsync_file = LatencySummary::of(file_syncs);
  r.fsync_directory = LatencySummary::of(dir_syncs);
  return r;
}

Json SynctestResult::json() const {
  return Json{{"seconds", json_round(seconds, 3)},
              {"files", files},
              {"operations", operations},
              {"bytes", bytes},
              {"files_per_second", json_round(files_per_second(), 1)},
              {"operations_per_second", json_round(operations_per_second(), 1)},
              {"fsync_file", fsync_file.json()},
              {"fsync_directory", fsync_directory.json()},
              {"failure", failure_json(failure)}};
}

}  // namespace nvj::workloads
