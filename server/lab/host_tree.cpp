// SPDX-License-Identifier: BSD-3-Clause
#include "server/lab/host_tree.h"

#include "common/unique_fd.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <system_error>
#include <utility>
#include <vector>

namespace nvj {
namespace {

using fscore::ext4::Attributes;
using fscore::ext4::ByteRange;
using fscore::ext4::FileType;
using fscore::ext4::SourceDirectory;
using fscore::ext4::SourceEntry;
using fscore::ext4::SourceFile;

[[noreturn]] void fail(const std::string& path, const char* what, int error = errno) {
  throw std::system_error(error, std::generic_category(), std::string(what) + " " + path);
}

fscore::ext4::Timestamp stamp(const struct statx_timestamp& t) { return {t.tv_sec, t.tv_nsec}; }

Attributes attributes_of(const struct statx& st) {
  Attributes a;
  a.permissions = static_cast<std::uint16_t>(st.stx_mode & 07777);
  a.uid = st.stx_uid;
  a.gid = st.stx_gid;
  a.atime = stamp(st.stx_atime);
  a.mtime = stamp(st.stx_mtime);
  a.ctime = stamp(st.stx_ctime);
  a.crtime = (st.stx_mask & STATX_BTIME) != 0 ? stamp(st.stx_btime) : a.ctime;
  return a;
}

FileType type_of(unsigned mode) {
  switch (mode & S_IFMT) {
    case S_IFDIR: return FileType::kDirectory;
    case S_IFREG: return FileType::kRegular;
    case S_IFLNK: return FileType::kSymlink;
    case S_IFCHR: return FileType::kChar;
    case S_IFBLK: return FileType::kBlock;
    case S_IFIFO: return FileType::kFifo;
    case S_IFSOCK: return FileType::kSocket;
    default: return FileType::kUnknown;
  }
}

// Extended attributes are not copied: count them so the caller can say so.
std::uint64_t xattr_count(int dir, const std::string& name) {
  const std::string proc = "/proc/self/fd/" + std::to_string(dir) + "/" + name;
  const ssize_t n = ::llistxattr(proc.c_str(), nullptr, 0);
  if (n <= 0) return 0;
  std::string names(static_cast<std::size_t>(n), '\0');
  const ssize_t got = ::llistxattr(proc.c_str(), names.data(), names.size());
  if (got <= 0) return 0;
  return static_cast<std::uint64_t>(std::count(names.begin(), names.begin() + got, '\0'));
}

class HostFile final : public SourceFile {
 public:
  HostFile(int fd, std::uint64_t size, std::string path) : fd_(fd), size_(size), path_(std::move(path)) {}

  // The whole file where the filesystem cannot say where its holes are.
  std::vector<ByteRange> data_ranges() override {
    std::vector<ByteRange> ranges;
    off_t pos = 0;
    while (static_cast<std::uint64_t>(pos) < size_) {
      const off_t data = ::lseek(fd_.get(), pos, SEEK_DATA);
      if (data < 0) {
        if (errno == ENXIO) break;  // only a hole is left
        if (errno == EINVAL) return {{0, size_}};
        fail(path_, "cannot find the data of");
      }
      off_t hole = ::lseek(fd_.get(), data, SEEK_HOLE);
      if (hole < 0) fail(path_, "cannot find the holes of");
      hole = std::min<off_t>(hole, static_cast<off_t>(size_));
      if (hole > data) ranges.push_back({static_cast<std::uint64_t>(data), static_cast<std::uint64_t>(hole - data)});
      pos = hole;
    }
    return ranges;
  }

  void read(std::uint64_t offset, std::span<std::uint8_t> buffer) override {
    std::size_t done = 0;
    while (done < buffer.size()) {
      const ssize_t n =
          ::pread(fd_.get(), buffer.data() + done, buffer.size() - done, static_cast<off_t>(offset + done));
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) fail(path_, "cannot read");
      if (n == 0) fail(path_, "file shrank while being copied:", EIO);
      done += static_cast<std::size_t>(n);
    }
  }

 private:
  UniqueFd fd_;
  std::uint64_t size_;
  std::string path_;
};

class HostDirectory final : public SourceDirectory {
 public:
  HostDirectory(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}

  std::vector<SourceEntry> entries() override {
    DIR* d = ::fdopendir(::dup(fd_.get()));
    if (d == nullptr) fail(path_, "cannot list");
    std::vector<std::string> names;
    errno = 0;
    while (const dirent* e = ::readdir(d)) {
      const std::string name = e->d_name;
      if (name != "." && name != "..") names.push_back(name);
    }
    const int error = errno;
    ::closedir(d);
    if (error != 0) fail(path_, "cannot list", error);
    std::vector<SourceEntry> out;
    out.reserve(names.size());
    for (const std::string& name : names) out.push_back(entry(name));
    return out;
  }

  std::unique_ptr<SourceDirectory> open_directory(const SourceEntry& e) override {
    const int fd = ::openat(fd_.get(), e.name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) fail(e.path, "cannot open");
    return std::make_unique<HostDirectory>(fd, e.path);
  }

  std::unique_ptr<SourceFile> open_file(const SourceEntry& e) override {
    const int fd = ::openat(fd_.get(), e.name.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd < 0) fail(e.path, "cannot open");
    return std::make_unique<HostFile>(fd, e.size, e.path);
  }

  std::string read_link(const SourceEntry& e) override {
    std::string target(static_cast<std::size_t>(e.size) + 1, '\0');
    const ssize_t n = ::readlinkat(fd_.get(), e.name.c_str(), target.data(), target.size());
    if (n < 0) fail(e.path, "cannot read the link");
    if (static_cast<std::size_t>(n) >= target.size()) fail(e.path, "link changed while being read:", EIO);
    target.resize(static_cast<std::size_t>(n));
    return target;
  }

 private:
  SourceEntry entry(const std::string& name) {
    SourceEntry e;
    e.name = name;
    e.path = path_ + "/" + name;
    struct statx st {};
    if (::statx(fd_.get(), name.c_str(), AT_SYMLINK_NOFOLLOW, STATX_BASIC_STATS | STATX_BTIME, &st) != 0)
      fail(e.path, "cannot stat");
    e.type = type_of(st.stx_mode);
    if (e.type == FileType::kUnknown) fail(e.path, "unknown file type of", EINVAL);
    e.attributes = attributes_of(st);
    e.size = st.stx_size;
    e.rdev_major = st.stx_rdev_major;
    e.rdev_minor = st.stx_rdev_minor;
    if (e.type != FileType::kDirectory && st.stx_nlink > 1)
      e.link_identity = std::pair<std::uint64_t, std::uint64_t>{makedev(st.stx_dev_major, st.stx_dev_minor), st.stx_ino};
    e.xattrs = xattr_count(fd_.get(), name);
    return e;
  }

  UniqueFd fd_;
  std::string path_;
};

}  // namespace

HostTree::HostTree(std::string root) : root_(std::move(root)), fd_(::open(root_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)) {
  if (fd_ < 0) fail(root_, "cannot open the directory");
}

HostTree::~HostTree() { ::close(fd_); }

Attributes HostTree::root_attributes() {
  struct statx st {};
  if (::statx(fd_, "", AT_EMPTY_PATH, STATX_BASIC_STATS | STATX_BTIME, &st) != 0) fail(root_, "cannot stat");
  return attributes_of(st);
}

std::unique_ptr<SourceDirectory> HostTree::open_root() {
  const int fd = ::dup(fd_);
  if (fd < 0) fail(root_, "cannot open the directory");
  return std::make_unique<HostDirectory>(fd, root_);
}

}  // namespace nvj
