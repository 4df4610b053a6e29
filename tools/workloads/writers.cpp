// SPDX-License-Identifier: BSD-3-Clause
#include "tools/workloads/writers.h"

#include "common/errno_name.h"
#include "common/mark_client.h"
#include "fscore/crc32c.h"
#include "tools/workloads/fact_poster.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <functional>
#include <stdexcept>

namespace nvj::workloads {
namespace fs = std::filesystem;
namespace {

void validate(const WritersOptions& o) {
  const auto bad = [](const std::string& what) { throw std::invalid_argument(what); };
  if (o.directory.empty()) bad("no directory given");
  if (o.tasks == 0) bad("--tasks must be at least 1");
  if (o.chunks == 0) bad("--chunks must be at least 1");
  if (o.chunk_size < 16 || o.chunk_size > (1u << 24)) bad("--chunk-size must be between 16 bytes and 16 MiB");
  if (o.directories == 0 || o.directories > o.tasks)
    bad("--dirs must be between 1 and --tasks (" + std::to_string(o.tasks) + "): give --dirs " +
        std::to_string(o.tasks) + " or fewer, or --tasks " + std::to_string(std::max(o.directories, 1u)) + " or more");
  if (o.rounds == 0) bad("--rounds must be at least 1");
}

// A fact the server did not take ends the task: the oracle would be wrong.
void post_fact(const std::function<void()>& post, const std::string& what) {
  try {
    post();
  } catch (const MarkError& e) {
    throw TaskError(std::string("post fact ") + what + ": " + e.what(), e.error() != 0 ? e.error() : EPROTO);
  }
}

// One task's round: progress once its file is truncated, then once per
// acknowledged chunk.
void run_task(const WritersOptions& o, const FactPoster& facts, std::uint32_t task, std::uint32_t round,
              TaskChannel& channel) {
  const std::string path = writers_file(o, task);
  const std::string name = fs::path(path).lexically_relative(o.directory).string();
  if (round > 0 || (o.overwrite && fs::exists(path))) post_fact([&] { facts.rewrite(path); }, "rewrite " + name);
  // A later round's open truncates, and one that fails may have cut the
  // file already (btrfs truncates step by step and can stop with ENOSPC part
  // way): once it is tried, the last round's contents are no longer
  // promised, so its unit counts before it. A first round's open creates
  // the file: its unit counts once it exists.
  const bool truncates = !o.overwrite && round > 0;
  if (truncates) channel.progress();
  const int fd = ::open(path.c_str(), O_CREAT | (o.overwrite ? 0 : O_TRUNC) | O_WRONLY | O_CLOEXEC, 0644);
  if (fd < 0) throw TaskError("create " + name, errno);
  if (!truncates) channel.progress();
  std::vector<unsigned char> chunk(o.chunk_size);
  std::uint32_t crc = ~0u;  // of the file so far (the raw register: fscore/crc32c.h)
  for (std::uint32_t c = 0; c < o.chunks; ++c) {
    writers_chunk(task, c, round, chunk);
    for (std::size_t done = 0; done < chunk.size();) {
      const ssize_t w = ::write(fd, chunk.data() + done, chunk.size() - done);
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) throw TaskError("write of chunk " + std::to_string(c) + " to " + name, w < 0 ? errno : ENOSPC);
      done += static_cast<std::size_t>(w);
    }
    if (facts.enabled()) crc = fscore::crc32c(crc, chunk.data(), chunk.size());
    const bool sync = o.sync == WritersSync::each || (o.sync == WritersSync::end && c + 1 == o.chunks);
    if (sync && ::fsync(fd) != 0) throw TaskError("fsync after chunk " + std::to_string(c) + " of " + name, errno);
    // More chunks follow, or (written over) the file goes on past them:
    // only what is written so far is known.
    struct stat st {};
    const std::uint64_t written = std::uint64_t{c + 1} * o.chunk_size;
    const bool longer = sync && o.overwrite && ::fstat(fd, &st) == 0 && static_cast<std::uint64_t>(st.st_size) > written;
    if (sync && (c + 1 < o.chunks || longer))
      post_fact([&] { facts.prefix(path, written, ~crc); }, "prefix " + name);
    else if (sync)
      post_fact([&] { facts.file(path, written, ~crc); }, "file " + name);
    if (o.sync != WritersSync::end || c + 1 == o.chunks) channel.progress();
  }
  if (::close(fd) != 0) throw TaskError("close of " + name, errno);
}

}  // namespace

double filesystem_fill(const std::string& path) {
  struct statvfs v {};
  if (::statvfs(path.c_str(), &v) != 0 || v.f_blocks == 0) return 0;
  return static_cast<double>(v.f_blocks - v.f_bfree) / static_cast<double>(v.f_blocks);
}

std::string writers_file(const WritersOptions& o, std::uint32_t task) {
  return (fs::path(o.directory) / ('d' + std::to_string(task % o.directories)) / ('t' + std::to_string(task)))
      .string();
}

void writers_chunk(std::uint32_t task, std::uint32_t chunk, std::uint32_t round, std::vector<unsigned char>& out) {
  // Every 16 bytes: task, chunk, round and the position, so a chunk read
  // back from elsewhere (another task, another round, a shifted offset)
  // never matches.
  for (std::size_t i = 0; i + 16 <= out.size(); i += 16) {
    const std::uint32_t words[4] = {task, chunk, round, static_cast<std::uint32_t>(i)};
    std::memcpy(out.data() + i, words, 16);
  }
}

WritersResult run_writers(const WritersOptions& o, const std::function<void(std::uint64_t, std::uint64_t)>& on_progress) {
  validate(o);
  const FactPoster facts = o.control.empty() ? FactPoster() : FactPoster(o.control, o.fact_root);
  for (std::uint32_t d = 0; d < o.directories; ++d) fs::create_directories(fs::path(o.directory) / ('d' + std::to_string(d)));
  if (facts.enabled()) facts.relative(o.directory);  // a tree outside the root is refused before any task runs
  WritersResult r;
  r.ledger.resize(o.tasks);
  // Units per round: the open and then one per acknowledged chunk (only the
  // last with sync=end).
  const std::uint64_t per_task = 1 + (o.sync == WritersSync::end ? 1 : o.chunks);
  const std::uint64_t total = std::uint64_t{o.rounds} * o.tasks * per_task;
  for (std::uint32_t round = 0; round < o.rounds && !r.failure; ++round) {
    const std::uint64_t before = std::uint64_t{round} * o.tasks * per_task;
    const TaskOutcome out = run_tasks(
        o.tasks, [&](std::uint32_t i, TaskChannel& c) { run_task(o, facts, i, round, c); },
        [&](std::uint64_t done) {
          if (on_progress) on_progress(before + done, total);
        });
    r.seconds += out.seconds;
    r.failure = out.failure;
    for (std::uint32_t t = 0; t < o.tasks; ++t) {
      const std::uint64_t units = out.progress[t];
      if (units == 0) continue;  // never tried to truncate its file: the last round's is still there
      const auto chunks = static_cast<std::uint32_t>(o.sync == WritersSync::end ? (units > 1 ? o.chunks : 0) : units - 1);
      r.ledger[t] = WritersResult::Ledger{true, round, chunks};
      r.bytes += std::uint64_t{chunks} * o.chunk_size;
    }
    if (!r.failure) ++r.rounds_done;
  }
  r.fill = filesystem_fill(o.directory);
  return r;
}

std::vector<WritersLoss> verify_writers(const WritersOptions& o, const std::vector<WritersResult::Ledger>& ledger) {
  std::vector<WritersLoss> losses;
  std::vector<unsigned char> want(o.chunk_size), got(o.chunk_size);
  for (std::uint32_t t = 0; t < ledger.size(); ++t) {
    const auto& l = ledger[t];
    if (!l.exists) continue;
    const std::string path = writers_file(o, t);
    const std::string name = fs::path(path).lexically_relative(o.directory).string();
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      losses.push_back({t, name + ": missing (" + std::string(std::strerror(errno)) + ")"});
      continue;
    }
    for (std::uint32_t c = 0; c < l.chunks; ++c) {
      writers_chunk(t, c, l.round, want);
      const ssize_t n = ::pread(fd, got.data(), got.size(), static_cast<off_t>(std::uint64_t{c} * o.chunk_size));
      if (n != static_cast<ssize_t>(got.size()) || got != want) {
        losses.push_back({t, name + ": acknowledged chunk " + std::to_string(c) + " of round " +
                                 std::to_string(l.round) + (n == static_cast<ssize_t>(got.size()) ? " differs" : " is missing")});
        break;
      }
    }
    ::close(fd);
  }
  return losses;
}

std::vector<WritersResult::Ledger> completed_writers_ledger(const WritersOptions& o) {
  validate(o);
  return std::vector<WritersResult::Ledger>(o.tasks, WritersResult::Ledger{true, o.rounds - 1, o.chunks});
}

Json WritersResult::json() const {
  Json j{{"seconds", json_round(seconds, 3)},
         {"rounds_done", rounds_done},
         {"bytes", bytes},
         {"fill", json_round(fill, 4)},
         {"failure", failure_json(failure)}};
  if (failure) j["failure_errno"] = failure->error != 0 ? Json(errno_name(failure->error)) : Json(nullptr);
  return j;
}

}  // namespace nvj::workloads
