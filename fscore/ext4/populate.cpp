#include "fscore/ext4/populate.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <map>
#include <system_error>
#include <utility>
#include <vector>

namespace fscore::ext4 {
namespace {

[[noreturn]] void fail(const std::string& path, const char* what, int error = errno) {
  throw std::system_error(error, std::generic_category(), std::string(what) + " " + path);
}

class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

Timestamp stamp(const struct statx_timestamp& t) { return {t.tv_sec, t.tv_nsec}; }

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

struct statx stat_at(int dir, const std::string& name, const std::string& path) {
  struct statx st {};
  if (::statx(dir, name.c_str(), AT_SYMLINK_NOFOLLOW, STATX_BASIC_STATS | STATX_BTIME, &st) != 0)
    fail(path, "cannot stat");
  return st;
}

// The byte ranges holding data; the whole file where the filesystem cannot say.
std::vector<ByteRange> data_ranges(int fd, std::uint64_t size, const std::string& path) {
  std::vector<ByteRange> ranges;
  off_t pos = 0;
  while (static_cast<std::uint64_t>(pos) < size) {
    const off_t data = ::lseek(fd, pos, SEEK_DATA);
    if (data < 0) {
      if (errno == ENXIO) break;  // only a hole is left
      if (errno == EINVAL) return {{0, size}};
      fail(path, "cannot find the data of");
    }
    off_t hole = ::lseek(fd, data, SEEK_HOLE);
    if (hole < 0) fail(path, "cannot find the holes of");
    hole = std::min<off_t>(hole, static_cast<off_t>(size));
    if (hole > data) ranges.push_back({static_cast<std::uint64_t>(data), static_cast<std::uint64_t>(hole - data)});
    pos = hole;
  }
  return ranges;
}

// A full filesystem, said with the path that did not fit.
template <typename Fn>
auto naming(const std::string& path, Fn&& fn) {
  try {
    return fn();
  } catch (const NoSpaceError& e) {
    throw NoSpaceError(path + ": " + e.what());
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

class Walker {
 public:
  explicit Walker(ImageBuilder& builder) : builder_(builder) {}

  void directory(int fd, std::uint32_t ino, const std::string& path) {
    DIR* d = ::fdopendir(::dup(fd));
    if (d == nullptr) fail(path, "cannot list");
    std::vector<std::string> names;
    errno = 0;
    while (const dirent* e = ::readdir(d)) {
      const std::string name = e->d_name;
      if (name != "." && name != "..") names.push_back(name);
    }
    const int error = errno;
    ::closedir(d);
    if (error != 0) fail(path, "cannot list", error);
    std::sort(names.begin(), names.end());  // the same tree gives the same image
    for (const std::string& name : names) entry(fd, ino, name, path + "/" + name);
  }

  PopulateCounts counts;

 private:
  void entry(int dir, std::uint32_t parent, const std::string& name, const std::string& path) {
    const struct statx st = stat_at(dir, name, path);
    const Attributes a = attributes_of(st);
    counts.xattrs_not_copied += xattr_count(dir, name);
    const unsigned type = st.stx_mode & S_IFMT;
    const std::pair<std::uint64_t, std::uint64_t> id{makedev(st.stx_dev_major, st.stx_dev_minor), st.stx_ino};
    if (type != S_IFDIR && st.stx_nlink > 1) {
      if (const auto it = seen_.find(id); it != seen_.end()) {
        naming(path, [&] { builder_.add_hard_link(parent, name, it->second); });
        ++counts.hard_links;
        return;
      }
    }
    std::uint32_t ino = 0;
    switch (type) {
      case S_IFDIR: {
        Fd fd(::openat(dir, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
        if (fd.get() < 0) fail(path, "cannot open");
        if (parent == ImageBuilder::kRoot && name == "lost+found") {  // the image has one: fill it
          directory(fd.get(), ImageBuilder::kLostFound, path);
          return;
        }
        ino = naming(path, [&] { return builder_.add_directory(parent, name, a); });
        ++counts.directories;
        directory(fd.get(), ino, path);
        return;
      }
      case S_IFREG: ino = file(dir, parent, name, path, a, st.stx_size); break;
      case S_IFLNK: ino = symlink(dir, parent, name, path, a, st.stx_size); break;
      case S_IFCHR:
      case S_IFBLK:
        ino = naming(path, [&] {
          return builder_.add_special(parent, name, a, type == S_IFCHR ? FileType::kChar : FileType::kBlock,
                                      st.stx_rdev_major, st.stx_rdev_minor);
        });
        ++counts.specials;
        break;
      case S_IFIFO:
      case S_IFSOCK:
        ino = naming(path, [&] {
          return builder_.add_special(parent, name, a, type == S_IFIFO ? FileType::kFifo : FileType::kSocket);
        });
        ++counts.specials;
        break;
      default: fail(path, "unknown file type of", EINVAL);
    }
    if (st.stx_nlink > 1) seen_.emplace(id, ino);
  }

  std::uint32_t file(int dir, std::uint32_t parent, const std::string& name, const std::string& path,
                     const Attributes& a, std::uint64_t size) {
    Fd fd(::openat(dir, name.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK));
    if (fd.get() < 0) fail(path, "cannot open");
    const std::vector<ByteRange> ranges = data_ranges(fd.get(), size, path);
    for (const ByteRange& r : ranges) counts.data_bytes += r.length;
    const int f = fd.get();
    const std::uint32_t ino = naming(path, [&] { return builder_.add_file(parent, name, a, size, ranges, [&](std::uint64_t offset, std::span<std::uint8_t> buffer) {
      std::size_t done = 0;
      while (done < buffer.size()) {
        const ssize_t n = ::pread(f, buffer.data() + done, buffer.size() - done, static_cast<off_t>(offset + done));
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) fail(path, "cannot read");
        if (n == 0) fail(path, "file shrank while being copied:", EIO);
        done += static_cast<std::size_t>(n);
      }
    }); });
    ++counts.files;
    return ino;
  }

  std::uint32_t symlink(int dir, std::uint32_t parent, const std::string& name, const std::string& path,
                        const Attributes& a, std::uint64_t size) {
    std::string target(static_cast<std::size_t>(size) + 1, '\0');
    const ssize_t n = ::readlinkat(dir, name.c_str(), target.data(), target.size());
    if (n < 0) fail(path, "cannot read the link");
    if (static_cast<std::size_t>(n) >= target.size()) fail(path, "link changed while being read:", EIO);
    target.resize(static_cast<std::size_t>(n));
    ++counts.symlinks;
    return naming(path, [&] { return builder_.add_symlink(parent, name, a, target); });
  }

  ImageBuilder& builder_;
  std::map<std::pair<std::uint64_t, std::uint64_t>, std::uint32_t> seen_;  // (device, inode) -> image inode
};

}  // namespace

PopulateCounts populate_from_directory(ImageBuilder& builder, const std::string& source) {
  Fd root(::open(source.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (root.get() < 0) fail(source, "cannot open the directory");
  struct statx st {};
  if (::statx(root.get(), "", AT_EMPTY_PATH, STATX_BASIC_STATS | STATX_BTIME, &st) != 0) fail(source, "cannot stat");
  builder.set_root_attributes(attributes_of(st));
  Walker walker(builder);
  walker.directory(root.get(), ImageBuilder::kRoot, source);
  return walker.counts;
}

}  // namespace fscore::ext4
