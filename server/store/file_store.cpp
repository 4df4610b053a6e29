// SPDX-License-Identifier: BSD-3-Clause
#include "server/store/file_store.h"

#include <fcntl.h>
#include <linux/falloc.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <utility>
#include <vector>

#include "common/size.h"
#include "common/unique_fd.h"
#include "server/store/io_error.h"

namespace nvj {
namespace {

[[noreturn]] void throw_errno(const char* what) { throw IoError(errno, what); }

// Messages about the file leave its path out: the caller names the parameter
// and its value.
std::runtime_error path_error(const std::string& what) { return std::runtime_error(what); }


}  // namespace

std::unique_ptr<FileStore> FileStore::open(const std::string& path, std::optional<std::uint64_t> size,
                                           std::uint64_t default_size) {
  struct stat st {};
  bool created = false;
  int raw = -1;
  if (::stat(path.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) throw path_error("is a directory, not a file");
    if (!S_ISREG(st.st_mode)) throw path_error("is not a regular file");
    raw = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
    if (raw < 0) throw path_error("cannot open for reading and writing: " + errno_text(errno));
  } else if (errno == ENOENT) {
    raw = ::open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (raw < 0) throw path_error("cannot create: " + errno_text(errno));
    created = true;
  } else {
    throw path_error(errno_text(errno));
  }
  UniqueFd fd(raw);

  if (::flock(fd.get(), LOCK_EX | LOCK_NB) != 0) {
    if (errno == EWOULDBLOCK) throw path_error("is in use by another export or server (locked)");
    throw path_error("cannot lock: " + errno_text(errno));
  }
  if (::fstat(fd.get(), &st) != 0) throw path_error("cannot stat: " + errno_text(errno));
  const auto existing = static_cast<std::uint64_t>(st.st_size);

  std::uint64_t serve = 0;
  if (created) {
    serve = size.value_or(default_size);
  } else if (existing == 0 && !size) {
    serve = default_size;
  } else if (!size) {
    serve = existing;
  } else if (*size < existing) {
    throw path_error("holds " + format_size(existing) + ", more than the " + format_size(*size) +
                               " asked for; it is never truncated (ask for its size or omit the size)");
  } else {
    serve = *size;
  }
  if (serve % 512 != 0)
    throw path_error("holds " + std::to_string(existing) + " bytes, not a multiple of 512");
  if (serve != existing && ::ftruncate(fd.get(), static_cast<off_t>(serve)) != 0) {
    const int err = errno;
    if (created) ::unlink(path.c_str());
    throw path_error("cannot set its size to " + format_size(serve) + ": " + errno_text(err));
  }

  const int dsync = ::open(path.c_str(), O_RDWR | O_DSYNC | O_CLOEXEC);
  if (dsync < 0) throw path_error("cannot open for synchronous writes: " + errno_text(errno));
  return std::unique_ptr<FileStore>(new FileStore(path, fd.release(), dsync, serve, created));
}

FileStore::FileStore(std::string path, int fd, int dsync_fd, std::uint64_t size, bool created)
    : path_(std::move(path)), fd_(fd), dsync_fd_(dsync_fd), size_(size), created_(created) {}

FileStore::~FileStore() {
  ::close(dsync_fd_);
  ::close(fd_);  // releases the lock
}

std::string FileStore::describe() const { return "file " + path_; }

void FileStore::read(void* buf, std::uint32_t count, std::uint64_t offset) {
  auto* out = static_cast<char*>(buf);
  while (count > 0) {
    const ssize_t n = ::pread(fd_, out, count, static_cast<off_t>(offset));
    if (n < 0) {
      if (errno == EINTR) continue;
      throw_errno("pread");
    }
    if (n == 0) {  // the file shrank under us: read as zeroes, like a hole
      std::memset(out, 0, count);
      return;
    }
    out += n;
    count -= static_cast<std::uint32_t>(n);
    offset += static_cast<std::uint64_t>(n);
  }
}

void FileStore::write(const void* buf, std::uint32_t count, std::uint64_t offset, bool durable) {
  const int fd = durable ? dsync_fd_ : fd_;
  const auto* in = static_cast<const char*>(buf);
  while (count > 0) {
    const ssize_t n = ::pwrite(fd, in, count, static_cast<off_t>(offset));
    if (n < 0) {
      if (errno == EINTR) continue;
      throw_errno("pwrite");
    }
    in += n;
    count -= static_cast<std::uint32_t>(n);
    offset += static_cast<std::uint64_t>(n);
  }
}

void FileStore::punch(std::uint32_t count, std::uint64_t offset, bool durable) {
  if (count == 0) return;
  if (::fallocate(fd_, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, static_cast<off_t>(offset), count) != 0) {
    if (errno != EOPNOTSUPP && errno != ENOSYS) throw_errno("fallocate");
    // A filesystem without hole punching: write the zeroes.
    const std::vector<char> zeroes(std::min<std::uint32_t>(count, 1u << 20), 0);
    std::uint32_t done = 0;
    while (done < count) {
      const auto len = std::min<std::uint32_t>(count - done, static_cast<std::uint32_t>(zeroes.size()));
      write(zeroes.data(), len, offset + done, false);
      done += len;
    }
  }
  if (durable && ::fdatasync(fd_) != 0) throw_errno("fdatasync");
}

void FileStore::zero(std::uint32_t count, std::uint64_t offset, bool durable) { punch(count, offset, durable); }

void FileStore::trim(std::uint32_t count, std::uint64_t offset, bool durable) { punch(count, offset, durable); }

void FileStore::flush() {
  if (::fdatasync(fd_) != 0) throw_errno("fdatasync");
}

void FileStore::extents(std::uint64_t offset, std::uint64_t count, const ExtentSink& sink) {
  const std::uint64_t end = std::min(size_, offset + count);
  std::uint64_t pos = offset;
  while (pos < end) {
    off_t data = ::lseek(fd_, static_cast<off_t>(pos), SEEK_DATA);
    if (data < 0 && errno != ENXIO) {
      if (errno == EINVAL || errno == EOPNOTSUPP) {  // no SEEK_DATA here: all data
        sink(Extent{pos, end - pos, false});
        return;
      }
      throw_errno("lseek(SEEK_DATA)");
    }
    const std::uint64_t data_at = data < 0 ? end : std::min(end, static_cast<std::uint64_t>(data));
    if (data_at > pos) {
      sink(Extent{pos, data_at - pos, true});
      pos = data_at;
      if (pos >= end) break;
    }
    const off_t hole = ::lseek(fd_, static_cast<off_t>(pos), SEEK_HOLE);
    if (hole < 0) throw_errno("lseek(SEEK_HOLE)");
    const std::uint64_t hole_at = std::min(end, static_cast<std::uint64_t>(hole));
    sink(Extent{pos, hole_at - pos, false});
    pos = hole_at;
  }
}

}  // namespace nvj
