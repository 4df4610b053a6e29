#include "tools/nvj/crash/ground_truth.h"

#include <fcntl.h>
#include <linux/falloc.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "common/unique_fd.h"
#include "fscore/crc32c.h"
#include "tools/nvj/host/filesystem_tools.h"
#include "tools/nvj/host/loop_device.h"
#include "tools/nvj/host/mount_namespace.h"
#include "tools/nvj/host/process.h"

namespace nvj::cli {

namespace {

using fscore::record::StateVerdict;
using fscore::record::Verdict;

std::runtime_error sys_error(const std::string& what) { return std::runtime_error(what + ": " + std::strerror(errno)); }

void write_all(int fd, const std::uint8_t* data, std::size_t n, std::uint64_t offset, const std::string& name) {
  while (n > 0) {
    const ssize_t w = ::pwrite(fd, data, n, static_cast<off_t>(offset));
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) throw sys_error("write " + name);
    data += w;
    n -= static_cast<std::size_t>(w);
    offset += static_cast<std::uint64_t>(w);
  }
}

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

fscore::record::PathContent DirectoryFacts::look(const std::string& path, std::optional<std::uint64_t> prefix) const {
  fscore::record::PathContent s;
  const std::string full = (root_ / path).string();
  struct stat st {};
  if (::lstat(full.c_str(), &st) != 0) {
    if (errno == ENOENT || errno == ENOTDIR) return s;
    throw sys_error("lstat " + path);
  }
  s.present = true;
  s.regular = S_ISREG(st.st_mode);
  if (!prefix || !s.regular) return s;
  UniqueFd fd(::open(full.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
  if (fd.get() < 0) throw sys_error("open " + path);
  s.size = static_cast<std::uint64_t>(st.st_size);
  const std::uint64_t want = std::min(*prefix, s.size);
  std::vector<std::uint8_t> buffer(1 << 20);
  std::uint32_t crc = ~0u;
  std::uint64_t done = 0;
  while (done < want) {
    const ssize_t r = ::read(fd.get(), buffer.data(), static_cast<std::size_t>(std::min<std::uint64_t>(buffer.size(), want - done)));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) throw sys_error("read " + path);
    if (r == 0) break;  // shorter than it said
    crc = fscore::crc32c(crc, buffer.data(), static_cast<std::size_t>(r));
    done += static_cast<std::uint64_t>(r);
  }
  s.crc_bytes = done;
  s.crc = ~crc;
  return s;
}

void write_state_file(fscore::record::CrashImage& image, std::uint8_t device, const std::filesystem::path& file) {
  auto& e = image.exported(device);
  UniqueFd fd(::open(file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600));
  if (fd.get() < 0) throw sys_error("open " + file.string());
  if (::ftruncate(fd.get(), static_cast<off_t>(e.size())) != 0) throw sys_error("truncate " + file.string());
  // Empty it: holes where the last state was (a file system without hole
  // punching gets zeroes written).
  if (::fallocate(fd.get(), FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, static_cast<off_t>(e.size())) != 0) {
    if (::ftruncate(fd.get(), 0) != 0 || ::ftruncate(fd.get(), static_cast<off_t>(e.size())) != 0)
      throw sys_error("empty " + file.string());
  }
  std::vector<std::uint8_t> buffer(1 << 20);
  for (const auto& [start, end] : e.covered())
    for (std::uint64_t at = start; at < end;) {
      const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(buffer.size(), end - at));
      e.read(at, std::span(buffer.data(), n));
      write_all(fd.get(), buffer.data(), n, at, file.string());
      at += n;
    }
}

namespace {

// The verdict of a mount, as the child that made it sends it: 'V', the
// verdict, the error, the violations; or 'E' and why the child could not
// mount at all. Strings are a u32 length and the bytes.
void put_string(std::string& out, const std::string& text) {
  const auto n = static_cast<std::uint32_t>(text.size());
  out.append(reinterpret_cast<const char*>(&n), sizeof n);
  out += text;
}

std::string take_string(const std::string& in, std::size_t& at) {
  std::uint32_t n = 0;
  if (in.size() - at < sizeof n) throw std::runtime_error("the ground truth's mount process: a short answer");
  std::memcpy(&n, in.data() + at, sizeof n);
  at += sizeof n;
  if (in.size() - at < n) throw std::runtime_error("the ground truth's mount process: a short answer");
  std::string text = in.substr(at, n);
  at += n;
  return text;
}

std::string encode(const StateVerdict& v) {
  std::string out = "V";
  out += static_cast<char>(v.verdict);
  put_string(out, v.error);
  put_string(out, std::to_string(v.violations.size()));
  for (const auto& x : v.violations) {
    put_string(out, x.path);
    put_string(out, x.expected);
    put_string(out, x.found);
  }
  return out;
}

StateVerdict decode(const std::string& in) {
  if (in.size() < 2 || (in[0] != 'V' && in[0] != 'E'))
    throw std::runtime_error("the ground truth's mount process ended without an answer");
  std::size_t at = 1;
  if (in[0] == 'E') throw std::runtime_error(take_string(in, at));
  StateVerdict v;
  v.verdict = static_cast<Verdict>(in[1]);
  at = 2;
  v.error = take_string(in, at);
  const std::size_t count = std::stoul(take_string(in, at));
  for (std::size_t i = 0; i < count; ++i) {
    fscore::record::FactViolation x;
    x.path = take_string(in, at);
    x.expected = take_string(in, at);
    x.found = take_string(in, at);
    v.violations.push_back(std::move(x));
  }
  return v;
}

// In the child: a mount namespace of its own (host/mount_namespace.h), the
// mount, the facts read through it, the unmount.
std::string mount_and_read(const std::string& device, const std::filesystem::path& mount_point,
                           const std::string& filesystem, const std::string& options,
                           const fscore::record::FactOracle& oracle) {
  if (std::string why; !enter_private_mount_namespace(why)) return std::string("E").append(why);
  StateVerdict v;
  if (::mount(device.c_str(), mount_point.c_str(), filesystem.c_str(), 0, options.c_str()) != 0) {
    v.verdict = Verdict::unreadable;
    v.error = "the kernel does not mount it: ";
    v.error += std::strerror(errno);  // appended: GCC 12 -O3 -Wrestrict misfires on "..." + std::string
    return encode(v);
  }
  try {
    v.violations = oracle.check(DirectoryFacts(mount_point));
  } catch (const std::exception& e) {
    v.verdict = Verdict::unreadable;
    v.error = std::string("reading it back: ") + e.what();
  }
  if (::umount2(mount_point.c_str(), 0) != 0) {
    const int error = errno;  // appended below: GCC 12 -O3 -Wrestrict misfires on "..." + std::string
    return std::string("Eunmount ").append(mount_point.string()).append(": ").append(std::strerror(error));
  }
  return encode(v);
}

}  // namespace

KernelCheck::KernelCheck(std::filesystem::path scratch, fscore::record::CrashImage& image, std::string filesystem,
                         std::string mount_options)
    : scratch_(std::move(scratch)),
      image_(image),
      filesystem_(std::move(filesystem)),
      mount_options_(std::move(mount_options)) {
  if (::geteuid() != 0) throw std::runtime_error("the ground truth needs root (loop devices and mounts)");
  const std::string checker = fsck_command(filesystem_, "", "").front();
  if (which(checker).empty())
    throw std::runtime_error("the ground truth needs " + checker + " (" +
                             (filesystem_ == "ext4" ? "e2fsprogs" : filesystem_ + "progs") + ")");
  try {
    std::filesystem::create_directories(scratch_);
    mount_point_ = scratch_ / "mnt";
    std::filesystem::create_directories(mount_point_);
    for (std::size_t d = 0; d < image_.count(); ++d) {
      files_.push_back(scratch_ / ("export" + std::to_string(d) + ".img"));
      write_state_file(image_, static_cast<std::uint8_t>(d), files_.back());
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
  if (!mount_point_.empty()) std::filesystem::remove(mount_point_, ignored);
}

StateVerdict KernelCheck::read_back(const std::string& device, const std::string& options,
                                    const fscore::record::FactOracle& oracle) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) throw sys_error("pipe");
  std::fflush(nullptr);  // nothing buffered is written twice
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    throw sys_error("fork");
  }
  if (pid == 0) {
    ::close(fds[0]);
    std::string answer;
    try {
      answer = mount_and_read(device, mount_point_, filesystem_, options, oracle);
    } catch (const std::exception& e) {
      answer = std::string("E") + e.what();
    }
    const char* p = answer.data();
    for (std::size_t left = answer.size(); left > 0;) {
      const ssize_t w = ::write(fds[1], p, left);
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) ::_exit(1);
      p += w;
      left -= static_cast<std::size_t>(w);
    }
    ::_exit(0);
  }
  ::close(fds[1]);
  std::string answer;
  char buffer[4096];
  for (;;) {
    const ssize_t r = ::read(fds[0], buffer, sizeof buffer);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    answer.append(buffer, static_cast<std::size_t>(r));
  }
  ::close(fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw std::runtime_error("the ground truth's mount process failed (status " + std::to_string(status) + ")");
  return decode(answer);
}

void KernelCheck::write_state() {
  for (std::size_t d = 0; d < files_.size(); ++d) {
    write_state_file(image_, static_cast<std::uint8_t>(d), files_[d]);
    // Nothing of the last state may be read from the loop device's cache.
    UniqueFd loop(::open(loops_[d].c_str(), O_RDONLY | O_CLOEXEC));
    if (loop.get() < 0 || ::ioctl(loop.get(), BLKFLSBUF, 0) != 0) throw sys_error("flush the cache of " + loops_[d]);
  }
}

StateVerdict KernelCheck::check(std::uint8_t data, std::optional<std::uint8_t> journal,
                                const fscore::record::FactOracle& oracle) {
  write_state();
  const std::string log = journal ? loops_.at(*journal) : "";
  StateVerdict v = read_back(loops_.at(data), mount_data(filesystem_, mount_options_, log), oracle);
  // Checked only once the kernel has let go of the devices.
  std::vector<std::string> held{loops_.at(data)};
  if (journal) held.push_back(loops_.at(*journal));
  wait_until_released(held, 10000);
  const std::vector<std::string> fsck = fsck_command(filesystem_, loops_.at(data), log);
  const RunResult r = run(fsck);
  if (v.verdict == Verdict::pass && !v.violations.empty()) v.verdict = Verdict::fail;
  if (r.status != 0) {  // damage e2fsck finds is named even where a fact broke too
    if (v.verdict == Verdict::pass) v.verdict = Verdict::unreadable;
    v.error += (v.error.empty() ? "" : "; ") + quote({fsck.begin(), fsck.end() - 1}) + " exits " + std::to_string(r.status) + ": " +
               first_lines(r.output, 6);
  }
  return v;
}

}  // namespace nvj::cli
