// SPDX-License-Identifier: BSD-3-Clause
#include "tools/nvj/crash/ground_truth.h"

#include <fcntl.h>
#include <linux/falloc.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cerrno>
#include <span>
#include <stdexcept>
#include <vector>

#include "common/errno_name.h"
#include "common/unique_fd.h"
#include "fscore/crc32c.h"
#include "fscore/zeroes.h"
#include "tools/nvj/host/devices/detached_mount.h"
#include "tools/nvj/host/devices/loop_device.h"
#include "tools/nvj/host/fs_tools/filesystem_tools.h"
#include "tools/nvj/host/processes/process.h"

namespace nvj::cli {

namespace {

using crashlab::StateVerdict;
using crashlab::Verdict;

void write_all(int fd, const std::uint8_t* data, std::size_t n, std::uint64_t offset, const std::string& name) {
  while (n > 0) {
    const ssize_t w = ::pwrite(fd, data, n, static_cast<off_t>(offset));
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) throw errno_error("write " + name);
    data += w;
    n -= static_cast<std::size_t>(w);
    offset += static_cast<std::uint64_t>(w);
  }
}

// The buffer a thread reads states and files through: one allocation per
// thread, not a fresh (page-faulting) one per state or file.
std::span<std::uint8_t> io_buffer() {
  thread_local std::vector<std::uint8_t> buffer(std::size_t{1} << 20);
  return buffer;
}

// A state file's blocks of zeroes are left holes, in steps of this.
constexpr std::size_t kZeroSkip = 64 * 1024;

// The first lines of a program's output, for a verdict's error.
std::string first_lines(const std::string& text, std::size_t lines) {
  std::size_t at = 0;
  for (std::size_t i = 0; i < lines && at != std::string::npos; ++i) {
    at = text.find('\n', at);
    if (at != std::string::npos) ++at;
  }
  std::string out = text.substr(0, at == std::string::npos ? text.size() : at);
  while (!out.empty() && out.back() == '\n') out.pop_back();
  for (char& c : out)
    if (c == '\n') c = ';';
  return out;
}

}  // namespace

crashlab::PathContent DirectoryFacts::look(const std::string& path, std::optional<std::uint64_t> prefix) const {
  crashlab::PathContent s;
  const std::string full = (root_ / path).string();
  struct stat st {};
  if (::lstat(full.c_str(), &st) != 0) {
    if (errno == ENOENT || errno == ENOTDIR) return s;
    throw errno_error("lstat " + path);
  }
  s.present = true;
  s.regular = S_ISREG(st.st_mode);
  if (!prefix || !s.regular) return s;
  UniqueFd fd(::open(full.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
  if (fd.get() < 0) throw errno_error("open " + path);
  s.size = static_cast<std::uint64_t>(st.st_size);
  const std::uint64_t want = std::min(*prefix, s.size);
  const std::span<std::uint8_t> buffer = io_buffer();
  std::uint32_t crc = ~0u;
  std::uint64_t done = 0;
  while (done < want) {
    const ssize_t r = ::read(fd.get(), buffer.data(), static_cast<std::size_t>(std::min<std::uint64_t>(buffer.size(), want - done)));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) throw errno_error("read " + path);
    if (r == 0) break;  // shorter than it said
    crc = fscore::crc32c(crc, buffer.data(), static_cast<std::size_t>(r));
    done += static_cast<std::uint64_t>(r);
  }
  s.crc_bytes = done;
  s.crc = ~crc;
  return s;
}

std::optional<std::vector<std::uint32_t>> DirectoryFacts::blocks(const std::string& path, std::size_t unit) const {
  const std::string full = (root_ / path).string();
  UniqueFd fd(::open(full.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK));
  if (fd.get() < 0) {
    if (errno == ENOENT || errno == ENOTDIR || errno == ELOOP) return std::nullopt;
    throw errno_error("open " + path);
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) throw errno_error("stat " + path);
  if (!S_ISREG(st.st_mode)) return std::nullopt;
  std::vector<std::uint8_t> bytes(static_cast<std::size_t>(st.st_size));
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t r = ::read(fd.get(), bytes.data() + done, bytes.size() - done);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) throw errno_error("read " + path);
    if (r == 0) break;  // shorter than it said
    done += static_cast<std::size_t>(r);
  }
  bytes.resize(done);
  return crashlab::fact_block_crcs(bytes.data(), bytes.size(), unit, false);
}

crashlab::PathMeta DirectoryFacts::meta(const std::string& path, bool xattrs) const {
  crashlab::PathMeta m;
  const std::string full = (root_ / path).string();
  struct stat st {};
  if (::lstat(full.c_str(), &st) != 0) {
    if (errno == ENOENT || errno == ENOTDIR) return m;
    throw errno_error("lstat " + path);
  }
  m.present = true;
  m.type = S_ISREG(st.st_mode) ? "file" : S_ISDIR(st.st_mode) ? "dir" : S_ISLNK(st.st_mode) ? "symlink" : "other";
  m.mode = st.st_mode & 07777u;
  m.nlink = st.st_nlink;
  if (S_ISLNK(st.st_mode)) {
    std::vector<char> target(4096);
    const ssize_t n = ::readlink(full.c_str(), target.data(), target.size());
    if (n < 0) throw errno_error("readlink " + path);
    m.target.assign(target.data(), static_cast<std::size_t>(n));
  }
  if (!xattrs) return m;
  std::vector<char> names(65536), value(65536);
  const ssize_t listed = ::llistxattr(full.c_str(), names.data(), names.size());
  if (listed < 0) throw errno_error("llistxattr " + path);
  for (std::size_t at = 0; at < static_cast<std::size_t>(listed);) {
    const std::string name(names.data() + at);
    at += name.size() + 1;
    const ssize_t n = ::lgetxattr(full.c_str(), name.c_str(), value.data(), value.size());
    if (n < 0) throw errno_error("lgetxattr " + path + " " + name);
    m.xattrs[name] = {static_cast<std::uint64_t>(n), crashlab::fact_crc32c(value.data(), static_cast<std::size_t>(n))};
  }
  return m;
}

void write_state_file(crashlab::CrashImage& image, std::uint8_t device, const std::filesystem::path& file) {
  auto& e = image.exported(device);
  UniqueFd fd(::open(file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600));
  if (fd.get() < 0) throw errno_error("open " + file.string());
  if (::ftruncate(fd.get(), static_cast<off_t>(e.size())) != 0) throw errno_error("truncate " + file.string());
  // Empty it: holes where the last state was (a file system without hole
  // punching gets zeroes written).
  if (::fallocate(fd.get(), FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, static_cast<off_t>(e.size())) != 0) {
    if (::ftruncate(fd.get(), 0) != 0 || ::ftruncate(fd.get(), static_cast<off_t>(e.size())) != 0)
      throw errno_error("empty " + file.string());
  }
  // Only what may hold anything but zeroes is written, and of that no
  // block of zeroes: a log mkfs zeroed with writes (XFS's, 64 MiB) would
  // cost every state more than its check.
  const std::span<std::uint8_t> buffer = io_buffer();
  for (const auto& [start, end] : e.nonzero())
    for (std::uint64_t at = start; at < end;) {
      const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(buffer.size(), end - at));
      e.read(at, buffer.first(n));
      fscore::for_each_nonzero_run(buffer.first(n), kZeroSkip, [&](std::size_t from, std::size_t length) {
        write_all(fd.get(), buffer.data() + from, length, at + from, file.string());
      });
      at += n;
    }
}

KernelCheck::KernelCheck(std::filesystem::path scratch, const std::vector<std::uint64_t>& export_sizes,
                         std::string filesystem, std::string mount_options)
    : scratch_(std::move(scratch)),
      filesystem_(std::move(filesystem)),
      mount_options_(std::move(mount_options)) {
  if (::geteuid() != 0) throw std::runtime_error("the ground truth needs root (loop devices and mounts)");
  const std::string checker = fsck_command(filesystem_, "", "").front();
  if (which(checker).empty())
    throw std::runtime_error("the ground truth needs " + checker + " (" +
                             (filesystem_ == "ext4" ? "e2fsprogs" : filesystem_ + "progs") + ")");
  try {
    std::filesystem::create_directories(scratch_);
    for (std::size_t d = 0; d < export_sizes.size(); ++d) {
      files_.push_back(scratch_ / ("export" + std::to_string(d) + ".img"));
      UniqueFd fd(::open(files_.back().c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
      if (fd.get() < 0 || ::ftruncate(fd.get(), static_cast<off_t>(export_sizes[d])) != 0)
        throw errno_error("create " + files_.back().string());
      loops_.push_back(loop_attach(files_.back().string()));
    }
  } catch (...) {
    teardown();
    throw;
  }
}

KernelCheck::~KernelCheck() { teardown(); }

void KernelCheck::teardown() noexcept {
  for (const std::string& loop : loops_) {
    try {
      loop_detach(loop);
    } catch (const std::exception&) {  // left for the user to see in losetup -a: nothing better to do here
    }
  }
  loops_.clear();
  std::error_code ignored;
  for (const auto& f : files_) std::filesystem::remove(f, ignored);
}

void KernelCheck::write_state(crashlab::CrashImage& image) {
  for (std::size_t d = 0; d < files_.size(); ++d) {
    write_state_file(image, static_cast<std::uint8_t>(d), files_[d]);
    // Nothing of the last state may be read from the loop device's cache.
    drop_block_cache(loops_[d]);
  }
}

StateVerdict KernelCheck::check(crashlab::CrashImage& image, std::uint8_t data, std::optional<std::uint8_t> journal,
                                const crashlab::FactChecker& oracle) {
  write_state(image);
  StateVerdict v;
  const std::string log = journal ? loops_.at(*journal) : "";
  try {
    // A copy of a filesystem that may be mounted beside it (the explorer's
    // lab, another check's state).
    DetachedMount mounted(filesystem_, loops_.at(data),
                          mount_data(filesystem_, copy_mount_options(filesystem_, mount_options_), log));
    try {
      v.violations = oracle.check(DirectoryFacts(mounted.root()));
    } catch (const std::exception& e) {
      v.verdict = Verdict::unreadable;
      v.error = std::string("reading it back: ") + e.what();
    }
    mounted.close();
  } catch (const MountRefused& e) {
    // The state needs fsck; what the checker then does (ext4: e2fsck -fy,
    // on this scratch copy) is part of the verdict.
    v.verdict = Verdict::needs_fsck;
    v.error = std::string("the kernel does not mount it: ") + e.what();
    const std::vector<std::string> repair = repair_command(filesystem_, loops_.at(data), log);
    const RunResult r = run(repair);
    v.error += "; " + quote({repair.begin(), repair.end() - 1}) + " exits " + std::to_string(r.status) + ": " +
               first_lines(r.output, 6);
    return v;
  }
  // Checked only once the kernel has let go of the devices.
  std::vector<std::string> held{loops_.at(data)};
  if (journal) held.push_back(loops_.at(*journal));
  wait_until_released(held, 10000);
  std::vector<std::string> fsck = fsck_command(filesystem_, loops_.at(data), log);
  // xfs_repair sizes its buffer cache's hash from the machine's memory and
  // spends half its time on a state setting it up; 512 is its own least
  // (what it takes on a machine with little memory), ample for the lab's
  // filesystems. It changes what xfs_repair keeps cached, not what it reads.
  if (filesystem_ == "xfs") fsck.insert(fsck.begin() + 2, {"-o", "bhash=512"});
  const RunResult r = run(fsck);
  if (v.verdict == Verdict::pass && !v.violations.empty()) v.verdict = Verdict::fail;
  if (checker_finds_damage(r.status, r.output)) {  // named even where a fact broke too
    if (v.verdict == Verdict::pass) v.verdict = Verdict::unreadable;
    v.error += (v.error.empty() ? "" : "; ") + quote({fsck.begin(), fsck.end() - 1}) + " exits " + std::to_string(r.status) + ": " +
               checker_findings(r.output, 6);
  }
  return v;
}

}  // namespace nvj::cli
