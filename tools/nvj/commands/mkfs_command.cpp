// SPDX-License-Identifier: BSD-3-Clause
// nvj mkfs: build an ext4 image file (and its external journal) without
// mke2fs, the way the server formats its exports.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "fscore/uuid.h"
#include "server/lab/config.h"
#include "server/lab/filesystem.h"
#include "common/size.h"
#include "server/lab/store_image.h"
#include "server/store/file_store.h"
#include "common/command_line.h"
#include "tools/nvj/commands.h"

namespace nvj::cli {
namespace {

constexpr const char* kMkfsText = R"(Build an ext4 filesystem in the file IMAGE, created sparse if it does not
exist: only metadata and file data are written. The features are those of
mke2fs -t ext4 without resize_inode (extents, flex_bg, 64bit, metadata_csum,
huge_file, dir_nlink, extra_isize, ...); an unmodified kernel mounts it.
)";

struct MkfsArgs {
  std::string image, size, journal, populate, label, uuid;
  std::uint32_t block_size = 0;
  bool force = false;
};

struct JournalOption {
  JournalPlacement placement = JournalPlacement::internal;
  std::optional<std::uint64_t> size;
  std::string image;  // external
};

std::uint64_t size_of(const std::string& option, const std::string& text) {
  try {
    return parse_size(text);
  } catch (const std::invalid_argument& e) {
    throw UsageError("nvj mkfs: " + option + " " + text + ": " + e.what());
  }
}

JournalOption parse_journal(const std::string& text) {
  JournalOption j;
  if (text == "none") {
    j.placement = JournalPlacement::none;
  } else if (text == "internal" || text.rfind("internal:", 0) == 0) {
    if (text.size() > 9) j.size = size_of("--journal", text.substr(9));
  } else if (text.rfind("external:", 0) == 0 && text.size() > 9) {
    j.placement = JournalPlacement::external;
    j.image = text.substr(9);
    // A trailing :SIZE, if what follows the last colon is a size.
    if (const auto colon = j.image.rfind(':'); colon != std::string::npos) {
      try {
        j.size = parse_size(j.image.substr(colon + 1));
        j.image.resize(colon);
      } catch (const std::invalid_argument&) {
      }
    }
    if (j.image.empty()) throw UsageError("nvj mkfs: --journal external: which file? (external:JOURNAL_IMAGE[:SIZE])");
  } else {
    throw UsageError("nvj mkfs: --journal " + text + ": internal[:SIZE], external:JOURNAL_IMAGE[:SIZE] or none");
  }
  return j;
}

// The image files, removed again if this run created them and failed.
class CreatedFiles {
 public:
  ~CreatedFiles() {
    if (!keep_)
      for (const std::string& path : paths_) ::unlink(path.c_str());
  }
  void add(const FileStore& store) {
    if (store.created()) paths_.push_back(store.path());
  }
  void keep() { keep_ = true; }

 private:
  std::vector<std::string> paths_;
  bool keep_ = false;
};

std::unique_ptr<FileStore> open_image(const std::string& what, const std::string& path,
                                      std::optional<std::uint64_t> size, std::uint64_t default_size) {
  try {
    return FileStore::open(path, size, default_size);
  } catch (const std::exception& e) {
    throw std::runtime_error(what + " " + path + ": " + e.what());
  }
}

// Whether an existing file holds any data (not just holes). Checked before
// the file is opened with a size, which would grow it.
bool file_holds_data(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;  // missing, or open_image says why
  errno = 0;
  const off_t data = ::lseek(fd, 0, SEEK_DATA);
  const int error = errno;
  ::close(fd);
  return data >= 0 || error != ENXIO;
}

int mkfs_main(const MkfsArgs& a) {
  FilesystemSpec spec;
  std::optional<std::uint64_t> size;
  if (!a.size.empty()) size = size_of("--size", a.size);
  if (a.block_size != 0) {
    if (a.block_size != 1024 && a.block_size != 2048 && a.block_size != 4096)
      throw UsageError("nvj mkfs: --block-size " + std::to_string(a.block_size) + ": 1024, 2048 or 4096");
    spec.block_size = a.block_size;
  }
  const JournalOption journal = a.journal.empty() ? JournalOption{} : parse_journal(a.journal);
  if (!a.populate.empty()) spec.populate = a.populate;
  if (a.label.size() > 16) throw UsageError("nvj mkfs: --label '" + a.label + "' is longer than 16 bytes");
  spec.label = a.label;
  if (!a.uuid.empty()) {
    spec.uuid = fscore::parse_uuid(a.uuid);
    if (!spec.uuid) throw UsageError("nvj mkfs: --uuid " + a.uuid + ": not a uuid (xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx)");
  }
  spec.force = a.force;
  const std::string& image = a.image;
  if (image.empty()) throw UsageError("nvj mkfs: which image? (nvj mkfs IMAGE --size SIZE)");
  if (!size && ::access(image.c_str(), F_OK) != 0)
    throw UsageError("nvj mkfs: " + image + " does not exist: give its size with --size");
  if (size) {
    const std::string why = check_export_size("data", *size, false);
    if (!why.empty()) throw UsageError("nvj mkfs: --size " + format_size(*size) + ": " + why);
  }
  spec.journal = journal.placement;
  spec.internal_journal_bytes = journal.placement == JournalPlacement::internal ? journal.size : std::nullopt;

  // Refused before anything is opened: opening with a size may grow a file.
  if (!spec.force) {
    if (file_holds_data(image)) throw std::runtime_error(image + " already holds data (--force overwrites it)");
    if (journal.placement == JournalPlacement::external && file_holds_data(journal.image))
      throw std::runtime_error(journal.image + " already holds data (--force overwrites it)");
  }
  CreatedFiles created;
  auto data = open_image("image", image, size, 0);
  created.add(*data);
  std::unique_ptr<FileStore> journal_store;
  if (journal.placement == JournalPlacement::external) {
    journal_store = open_image("journal image", journal.image, journal.size, SizeLimits::kDefaultJournal);
    created.add(*journal_store);
  }
  const FilesystemState state = prepare_filesystem(spec, *data, journal_store.get());
  created.keep();
  std::printf("%s: %s, uuid %s\n", image.c_str(), state.describe().c_str(), fscore::format_uuid(state.uuid).c_str());
  if (journal_store) std::printf("%s: its journal device, %s\n", journal.image.c_str(), format_size(journal_store->size()).c_str());
  if (spec.populate) {
    const auto& c = state.populated;
    std::printf("from %s: %llu files, %llu directories, %llu symlinks, %llu hard links, %llu special files, %s of data\n",
                spec.populate->c_str(), static_cast<unsigned long long>(c.files),
                static_cast<unsigned long long>(c.directories), static_cast<unsigned long long>(c.symlinks),
                static_cast<unsigned long long>(c.hard_links), static_cast<unsigned long long>(c.specials),
                format_size(c.data_bytes).c_str());
    if (c.xattrs_not_copied > 0)
      std::fprintf(stderr, "nvj mkfs: warning: %llu extended attributes (ACLs, capabilities, ...) were not copied\n",
                   static_cast<unsigned long long>(c.xattrs_not_copied));
  }
  return 0;
}

}  // namespace

CommandRun declare_mkfs(Command& app) {
  auto a = std::make_shared<MkfsArgs>();
  app.describe(kMkfsText);
  app.add("IMAGE", a->image, "the image file, created sparse if it does not exist");
  app.add("--size", a->size, "the image's size (default: the existing file's); 8M to 16T, e.g. 1G")
      .value_name("SIZE");
  app.count("--block-size", a->block_size, 1024u, 4096u,
            "1024, 2048 or 4096 (default: 1024 below 512 MiB, else 4096)");
  app.add("--journal", a->journal,
                 "internal[:SIZE]: a journal inside the filesystem, inode 8 (default; SIZE defaults to what mke2fs "
                 "would choose); external:JOURNAL_IMAGE[:SIZE]: a journal device in its own file (SIZE default 64M), "
                 "linked both ways by uuid (mount with -o journal_path=DEVICE, check with e2fsck -j); none: no journal")
      .value_name("PLACEMENT");
  app.add("--populate", a->populate, "copy DIR's tree into the filesystem, like mke2fs -d").value_name("DIR");
  app.add("--label", a->label, "volume label, at most 16 bytes").value_name("LABEL");
  app.add("--uuid", a->uuid, "the filesystem's uuid (default: random)").value_name("UUID");
  app.flag("--force", a->force, "overwrite an image that already holds data");
  return [a] { return mkfs_main(*a); };
}

}  // namespace nvj::cli
