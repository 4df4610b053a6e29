// SPDX-License-Identifier: BSD-3-Clause
#include "tools/workloads/explore_steps.h"

#include <fcntl.h>
#include <linux/falloc.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <chrono>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "common/unique_fd.h"
#include "crashlab/facts/fact.h"

namespace nvj::workloads {

namespace fs = std::filesystem;
using crashlab::explore::LiveEntry;
using crashlab::explore::Op;
using crashlab::explore::OpKind;
using crashlab::explore::Persist;
using crashlab::explore::Step;

namespace {

constexpr std::size_t kBlock = 4096;

[[noreturn]] void failed(const std::string& what) {
  throw std::runtime_error(what + ": " + std::strerror(errno));
}

// Bytes no two operations share: a pattern seeded by the operation and the path.
std::vector<unsigned char> pattern(const Op& op, std::size_t n) {
  std::uint32_t x = 2166136261u;
  for (const char c : std::string(to_string(op.kind)) + ":" + op.path) x = (x ^ static_cast<unsigned char>(c)) * 16777619u;
  std::vector<unsigned char> out(n);
  for (auto& b : out) {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    b = static_cast<unsigned char>(x);
  }
  return out;
}

UniqueFd open_or_fail(const fs::path& p, int flags, const std::string& what) {
  UniqueFd fd(::open(p.c_str(), flags | O_CLOEXEC, 0644));
  if (fd.get() < 0) failed(what + ": open " + p.string());
  return fd;
}

void pwrite_all(int fd, const void* data, std::size_t n, off_t at, const std::string& what) {
  const auto* p = static_cast<const unsigned char*>(data);
  while (n > 0) {
    const ssize_t w = ::pwrite(fd, p, n, at);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) failed(what + ": write");
    p += w;
    n -= static_cast<std::size_t>(w);
    at += w;
  }
}

void check(int rc, const std::string& what) {
  if (rc != 0) failed(what);
}

// write_direct: the first block through O_DIRECT, from an aligned buffer.
void write_direct(const fs::path& p, const Op& op, const std::string& what) {
  void* buffer = nullptr;
  if (::posix_memalign(&buffer, kBlock, kBlock) != 0) throw std::bad_alloc();
  const std::unique_ptr<void, decltype(&std::free)> owned(buffer, &std::free);
  const auto bytes = pattern(op, kBlock);
  std::memcpy(buffer, bytes.data(), kBlock);
  pwrite_all(open_or_fail(p, O_WRONLY | O_DIRECT, what).get(), buffer, kBlock, 0, what);
}

// mmap_write: 100 bytes at 4000 through a shared mapping, then msync.
void mmap_write(const fs::path& p, const Op& op, const std::string& what) {
  UniqueFd fd = open_or_fail(p, O_RDWR, what);
  void* map = ::mmap(nullptr, 2 * kBlock, PROT_READ | PROT_WRITE, MAP_SHARED, fd.get(), 0);
  if (map == MAP_FAILED) failed(what + ": mmap");
  const auto bytes = pattern(op, 100);
  std::memcpy(static_cast<unsigned char*>(map) + 4000, bytes.data(), bytes.size());
  const int synced = ::msync(map, 2 * kBlock, MS_SYNC);
  ::munmap(map, 2 * kBlock);
  check(synced, what + ": msync");
}

// falloc, falloc_keep_size, falloc_punch, falloc_zero: fallocate(2) with
// the mode and range of each.
void fallocate_op(const fs::path& p, const Op& op, const std::string& what) {
  int mode = 0;
  off_t at = 2 * kBlock, len = 2 * kBlock;
  if (op.kind == OpKind::falloc_keep_size) mode = FALLOC_FL_KEEP_SIZE;
  if (op.kind == OpKind::falloc_punch) mode = FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, at = kBlock, len = kBlock;
  if (op.kind == OpKind::falloc_zero) mode = FALLOC_FL_ZERO_RANGE, at = 1000, len = 4000;
  check(::fallocate(open_or_fail(p, O_WRONLY, what).get(), mode, at, len), what);
}

// chmod's mode, octal ("0755"); a runtime_error naming the step otherwise.
mode_t octal_mode(const std::string& text, const std::string& what) {
  if (text.empty() || text.size() > 4 || text.find_first_not_of("01234567") != std::string::npos)
    throw std::runtime_error(what + ": the mode '" + text + "' is no octal permission bits");
  return static_cast<mode_t>(std::stoul(text, nullptr, 8));
}

// The operations on a file's data (writes, fallocate, truncate) on `p`.
void change_data(const fs::path& p, const Op& op, const std::string& what) {
  switch (op.kind) {
    case OpKind::fill: {
      const auto bytes = pattern(op, 2 * kBlock);
      pwrite_all(open_or_fail(p, O_WRONLY, what).get(), bytes.data(), bytes.size(), 0, what);
      return;
    }
    case OpKind::write_append: {
      UniqueFd fd = open_or_fail(p, O_WRONLY | O_APPEND, what);
      const auto bytes = pattern(op, kBlock);
      if (::write(fd.get(), bytes.data(), bytes.size()) != static_cast<ssize_t>(bytes.size())) failed(what);
      return;
    }
    case OpKind::write_overwrite: {
      const auto bytes = pattern(op, kBlock);
      pwrite_all(open_or_fail(p, O_WRONLY, what).get(), bytes.data(), bytes.size(), kBlock, what);
      return;
    }
    case OpKind::write_unaligned: {
      const auto bytes = pattern(op, 5000);
      pwrite_all(open_or_fail(p, O_WRONLY, what).get(), bytes.data(), bytes.size(), 3000, what);
      return;
    }
    case OpKind::write_direct:
      write_direct(p, op, what);
      return;
    case OpKind::mmap_write:
      mmap_write(p, op, what);
      return;
    case OpKind::falloc:
    case OpKind::falloc_keep_size:
    case OpKind::falloc_punch:
    case OpKind::falloc_zero:
      fallocate_op(p, op, what);
      return;
    case OpKind::truncate_shrink:
      check(::truncate(p.c_str(), 3000), what);
      return;
    case OpKind::truncate_grow:
      check(::truncate(p.c_str(), 20000), what);
      return;
    default:  // run_op() gives this function the data operations only
      throw std::logic_error(what + ": not an operation on a file's data");
  }
}

// `op` under `root`: on names and attributes here, on a file's data by change_data().
void run_op(const fs::path& root, const Op& op) {
  const std::string what = describe(op);
  const fs::path p = root / op.path;
  const fs::path q = root / op.second;
  switch (op.kind) {
    case OpKind::creat:
      open_or_fail(p, O_CREAT | O_EXCL | O_WRONLY, what);
      return;
    case OpKind::mkdir:
      check(::mkdir(p.c_str(), 0755), what);
      return;
    case OpKind::fill:
    case OpKind::write_append:
    case OpKind::write_overwrite:
    case OpKind::write_unaligned:
    case OpKind::write_direct:
    case OpKind::mmap_write:
    case OpKind::falloc:
    case OpKind::falloc_keep_size:
    case OpKind::falloc_punch:
    case OpKind::falloc_zero:
    case OpKind::truncate_shrink:
    case OpKind::truncate_grow:
      change_data(p, op, what);
      return;
    case OpKind::link:
      check(::link(p.c_str(), q.c_str()), what);
      return;
    case OpKind::unlink:
      check(::unlink(p.c_str()), what);
      return;
    case OpKind::rmdir:
      check(::rmdir(p.c_str()), what);
      return;
    case OpKind::rename_new:
    case OpKind::rename_over:
    case OpKind::rename_dir:
      check(::rename(p.c_str(), q.c_str()), what);
      return;
    case OpKind::symlink:
      check(::symlink(op.second.c_str(), p.c_str()), what);
      return;
    case OpKind::setxattr: {
      const auto bytes = pattern(op, 16);
      check(::fsetxattr(open_or_fail(p, O_RDONLY, what).get(), "user.nvj", bytes.data(), bytes.size(), 0), what);
      return;
    }
    case OpKind::removexattr:
      check(::fremovexattr(open_or_fail(p, O_RDONLY, what).get(), "user.nvj"), what);
      return;
    case OpKind::chmod:
      check(::chmod(p.c_str(), octal_mode(op.second, what)), what);
      return;
    case OpKind::nothing:
      return;
  }
}

}  // namespace

void run_step(const fs::path& root, const Step& step, PersistCalls calls) {
  run_op(root, step.op);
  run_persist(root, step, calls);
}

void run_operation(const fs::path& root, const Step& step) { run_op(root, step.op); }

void run_persist(const fs::path& root, const Step& step, PersistCalls calls) {
  const std::string what = describe_persist(step) + " after " + describe(step.op);
  const bool make = calls == PersistCalls::make;
  switch (step.persist) {
    case Persist::none:
      return;
    case Persist::sync:
      if (make) ::sync();
      return;
    case Persist::fsync:
    case Persist::fdatasync: {
      const fs::path p = step.persist_path == "." ? root : root / step.persist_path;
      UniqueFd fd = open_or_fail(p, O_RDONLY, what);
      if (make) check(step.persist == Persist::fsync ? ::fsync(fd.get()) : ::fdatasync(fd.get()), what);
      return;
    }
  }
}

std::string step_flags(const StepOptions& options) { return options.periodic_commit ? " --periodic-commit" : ""; }

void periodic_commit_point(const fs::path& root) {
  for (auto it = fs::recursive_directory_iterator(root); it != fs::recursive_directory_iterator(); ++it) {
    if (it->path().lexically_relative(root) == "lost+found") {  // as live_tree() leaves it out
      it.disable_recursion_pending();
      continue;
    }
    if (!it->is_regular_file() || it->is_symlink()) continue;
    const std::string what = "the periodic-commit point: write back " + it->path().lexically_relative(root).string();
    UniqueFd fd = open_or_fail(it->path(), O_RDONLY | O_NOFOLLOW, what);
    check(::sync_file_range(fd.get(), 0, 0,
                            SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE | SYNC_FILE_RANGE_WAIT_AFTER),
          what);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(kPeriodicCommitWaitMs));
}

std::string oracle_flags(const crashlab::explore::OracleOptions& options) {
  return std::string(options.auto_da_alloc ? " --auto-da-alloc" : "") +
         (options.stale_data_rule ? "" : " --no-stale-data-rule") + (options.tested ? " --promises-tested" : "");
}

crashlab::explore::LiveTree live_tree(const fs::path& root) {
  crashlab::explore::LiveTree out;
  struct statvfs vfs {};
  if (::statvfs(root.c_str(), &vfs) != 0) failed("statvfs " + root.string());
  // The filesystem's block, what it writes alone; 0 (no nostale facts)
  // where it is no unit a fact can carry.
  const auto block_size = vfs.f_bsize % 512 == 0 && vfs.f_bsize <= crashlab::kMaxFactUnit
                              ? static_cast<std::uint32_t>(vfs.f_bsize) : 0;
  for (auto it = fs::recursive_directory_iterator(root); it != fs::recursive_directory_iterator(); ++it) {
    const std::string path = it->path().lexically_relative(root).string();
    if (path == "lost+found") {
      it.disable_recursion_pending();
      continue;
    }
    struct stat st {};
    if (::lstat(it->path().c_str(), &st) != 0) failed("lstat " + path);
    LiveEntry e;
    e.ino = st.st_ino;
    e.mode = st.st_mode & 07777u;
    e.nlink = st.st_nlink;
    if (S_ISDIR(st.st_mode)) {
      e.type = LiveEntry::Type::dir;
    } else if (S_ISLNK(st.st_mode)) {
      e.type = LiveEntry::Type::symlink;
      std::vector<char> target(4096);
      const ssize_t n = ::readlink(it->path().c_str(), target.data(), target.size());
      if (n < 0) failed("readlink " + path);
      e.target.assign(target.data(), static_cast<std::size_t>(n));
    } else {
      unsigned char value[256];
      const ssize_t n = ::lgetxattr(it->path().c_str(), "user.nvj", value, sizeof value);
      if (n < 0 && errno != ENODATA) failed("lgetxattr " + path + " user.nvj");
      if (n >= 0) {
        e.has_xattr = true;
        e.xattr_size = static_cast<std::uint64_t>(n);
        e.xattr_crc = crashlab::fact_crc32c(value, static_cast<std::size_t>(n));
      }
      UniqueFd fd = open_or_fail(it->path(), O_RDONLY | O_NOFOLLOW, "read back " + path);
      std::vector<unsigned char> bytes(static_cast<std::size_t>(st.st_size));
      std::size_t done = 0;
      while (done < bytes.size()) {
        const ssize_t r = ::pread(fd.get(), bytes.data() + done, bytes.size() - done, static_cast<off_t>(done));
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) failed("read back " + path);
        done += static_cast<std::size_t>(r);
      }
      e.size = bytes.size();
      e.crc = crashlab::fact_crc32c(bytes.data(), bytes.size());
      e.block_size = block_size;
      e.blocks = crashlab::fact_block_crcs(bytes.data(), bytes.size(), block_size, true);
    }
    out[path] = e;
  }
  return out;
}

ExploreTrace run_workload_steps(const fs::path& root, const crashlab::explore::Workload& workload,
                                crashlab::explore::OracleOptions options,
                                const std::function<void(const std::string& label)>& post, StepOptions steps) {
  crashlab::explore::Oracle oracle(options);
  ExploreTrace trace;
  const auto post_all = [&](const std::vector<crashlab::explore::RuledFact>& facts, std::vector<PostedFact>& into) {
    for (const auto& f : facts) {
      into.push_back({crashlab::format_fact(f.fact), f.rule});
      post(into.back().label);
    }
  };
  try {
    for (const Step& step : workload.steps) {
      trace.steps.push_back({step, {}, {}, {}});
      post_all(oracle.before(step.op, live_tree(root)), trace.steps.back().before);
      run_operation(root, step);
      post_all(oracle.written(step, live_tree(root)), trace.steps.back().written);
      if (steps.periodic_commit && !step.setup) periodic_commit_point(root);
      run_persist(root, step);
      post_all(oracle.after(step, live_tree(root)), trace.steps.back().after);
    }
  } catch (const std::exception& e) {
    trace.error = e.what();
  }
  return trace;
}

namespace {

Json facts_json(const std::vector<PostedFact>& facts) {
  Json out = Json::array();
  for (const PostedFact& f : facts) out.push_back(Json::array({f.label, f.rule}));
  return out;
}

std::vector<PostedFact> facts_from_json(const Json& j, const std::string& where) {
  if (!j.is_array()) throw std::runtime_error(where + ": expected a list of [label, rule]");
  std::vector<PostedFact> out;
  for (const Json& f : j) {
    if (!f.is_array() || f.size() != 2 || !f[0].is_string() || !f[1].is_string())
      throw std::runtime_error(where + ": expected [label, rule], not " + to_json_text(f));
    out.push_back({f[0].get<std::string>(), f[1].get<std::string>()});
  }
  return out;
}

}  // namespace

Json trace_to_json(const ExploreTrace& trace) {
  Json steps = Json::array();
  for (const TracedStep& s : trace.steps)
    steps.push_back(Json{{"before", facts_json(s.before)}, {"written", facts_json(s.written)}, {"after", facts_json(s.after)}});
  return Json{{"error", trace.error.empty() ? Json(nullptr) : Json(trace.error)}, {"steps", steps}};
}

ExploreTrace trace_from_json(const Json& json, const crashlab::explore::Workload& workload) {
  if (!json.is_object() || !json.contains("steps") || !json.at("steps").is_array() || !json.contains("error"))
    throw std::runtime_error("a workload's trace: expected {\"error\", \"steps\"}");
  const Json& steps = json.at("steps");
  if (steps.size() > workload.steps.size())
    throw std::runtime_error("a workload's trace has " + std::to_string(steps.size()) + " steps; " + workload.name +
                             " has " + std::to_string(workload.steps.size()));
  ExploreTrace trace;
  if (json.at("error").is_string()) trace.error = json.at("error").get<std::string>();
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const std::string where = "step " + std::to_string(i + 1) + " of the trace";
    if (!steps[i].is_object() || !steps[i].contains("before") || !steps[i].contains("written") ||
        !steps[i].contains("after"))
      throw std::runtime_error(where + ": expected {\"before\", \"written\", \"after\"}");
    trace.steps.push_back({workload.steps[i], facts_from_json(steps[i].at("before"), where),
                           facts_from_json(steps[i].at("written"), where), facts_from_json(steps[i].at("after"), where)});
  }
  if (trace.error.empty() && trace.steps.size() != workload.steps.size())
    throw std::runtime_error("a workload's trace ends after " + std::to_string(trace.steps.size()) + " of " +
                             std::to_string(workload.steps.size()) + " steps without saying why");
  return trace;
}

}  // namespace nvj::workloads
