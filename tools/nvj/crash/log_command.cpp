// SPDX-License-Identifier: BSD-3-Clause
#include "tools/nvj/crash/log_command.h"

#include <fmt/format.h>

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <stdexcept>
#include <system_error>
#include <utility>
#include <vector>

#include "common/command_line.h"
#include "crashlab/record/log_export.h"
#include "crashlab/record/log_import.h"
#include "crashlab/index/recording_index.h"
#include "fscore/dmlog/log_reader.h"
#include "fscore/fs_signature.h"
#include "tools/nvj/crash/subcommands.h"
#include "tools/nvj/host/files/file_image.h"
#include "tools/nvj/host/files/mapped_file.h"

namespace nvj::cli {

namespace {

namespace dmlog = fscore::dmlog;

constexpr std::uint64_t kMiB = 1u << 20;
constexpr std::uint64_t kHead = 128 * 1024;  // every superblock fs_signature reads lies in it

// The first kHead bytes of the device after every entry of the log.
class LogHead final : public fscore::BlockSource {
 public:
  explicit LogHead(const dmlog::LogReader& log) : bytes_(kHead, 0) {
    const std::uint64_t sector = log.super().sectorsize;
    for (const dmlog::Entry& e : log.entries()) {
      if (e.is(dmlog::kMark) || e.header.nr_sectors == 0) continue;
      const std::uint64_t start = e.header.sector * sector;
      if (start >= kHead) continue;
      const std::uint64_t end = std::min(kHead, start + e.header.nr_sectors * sector);
      if (e.is(dmlog::kDiscard))
        std::fill(bytes_.begin() + static_cast<std::ptrdiff_t>(start), bytes_.begin() + static_cast<std::ptrdiff_t>(end), 0);
      else
        std::copy_n(e.data.begin(), end - start, bytes_.begin() + static_cast<std::ptrdiff_t>(start));
    }
  }
  std::uint64_t size() const override { return kHead; }
  void read(std::uint64_t offset, std::span<std::uint8_t> out) const override {
    std::copy_n(bytes_.begin() + static_cast<std::ptrdiff_t>(offset), out.size(), out.begin());
  }

 private:
  std::vector<std::uint8_t> bytes_;
};

// A new file written anywhere (a log grows as it is written, its super
// block last), synced before it is closed.
class NewFile final : public fscore::BlockSink {
 public:
  explicit NewFile(std::string path) : path_(std::move(path)) {
    fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd_ < 0) throw std::system_error(errno, std::generic_category(), path_);
  }
  ~NewFile() override {
    if (fd_ >= 0) ::close(fd_);
  }
  NewFile(const NewFile&) = delete;
  NewFile& operator=(const NewFile&) = delete;
  void write(std::uint64_t offset, std::span<const std::uint8_t> bytes) override {
    for (std::size_t done = 0; done < bytes.size();) {
      const ssize_t n = ::pwrite(fd_, bytes.data() + done, bytes.size() - done, static_cast<off_t>(offset + done));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) throw std::system_error(n < 0 ? errno : EIO, std::generic_category(), path_ + ": write");
      done += static_cast<std::size_t>(n);
    }
  }
  void close() {
    if (::fdatasync(fd_) != 0 || ::close(std::exchange(fd_, -1)) != 0)
      throw std::system_error(errno, std::generic_category(), path_ + ": sync");
  }

 private:
  std::string path_;
  int fd_ = -1;
};

struct OpenLog {
  std::string path;
  std::unique_ptr<MappedFile> file;
  std::unique_ptr<dmlog::LogReader> reader;
};

OpenLog open_log(const std::string& path, std::uint64_t size, bool past_count) {
  OpenLog o{path, std::make_unique<MappedFile>(path), nullptr};
  dmlog::ReadOptions options;
  options.past_count = past_count;
  if (size > 0) options.device_bytes = size;
  try {
    o.reader = std::make_unique<dmlog::LogReader>(o.file->bytes(), options);
  } catch (const dmlog::LogError& e) {
    throw std::runtime_error(path + ": " + e.what());
  }
  return o;
}

// The export's size: as given, else the larger of what the log writes and
// what the filesystem in it says its device holds, in whole MiB.
std::uint64_t size_of(const OpenLog& log, std::uint64_t given, const char* name) {
  if (given > 0) return given;
  const fscore::FsSignature fs = fscore::identify_filesystem(LogHead(*log.reader));
  const std::uint64_t bytes = std::max(log.reader->extent(), fs.bytes);
  const std::uint64_t size = std::max<std::uint64_t>(kMiB, (bytes + kMiB - 1) / kMiB * kMiB);
  std::fprintf(stderr, "nvj crash import: the %s export: %llu MiB (%s; --%ssize gives another)\n", name,
               static_cast<unsigned long long>(size / kMiB),
               fs.bytes > 0 ? fmt::format("the {} in the log says {} bytes", fscore::to_string(fs.kind), fs.bytes).c_str()
                            : "what the log writes",
               std::string(name) == "data" ? "" : "journal-");
  return size;
}

// Nothing already stored is overwritten.
void refuse_existing(const std::string& path, const char* command) {
  if (std::filesystem::exists(path))
    throw UsageError(std::string(command) + ": " + path + " exists; nothing is overwritten (give another --out)");
}

bool has_mark(const dmlog::LogReader& log, const std::string& label) {
  return std::any_of(log.entries().begin(), log.entries().end(),
                     [&](const dmlog::Entry& e) { return e.is(dmlog::kMark) && e.label == label; });
}

void say_uncounted(const OpenLog& log, bool past_count) {
  if (log.reader->uncounted() == 0) return;
  std::fprintf(stderr,
               "nvj crash import: %s: %llu whole entries follow the %llu its super block counts (a writer that "
               "stopped before it counted them?): %s\n",
               log.path.c_str(), static_cast<unsigned long long>(log.reader->uncounted()),
               static_cast<unsigned long long>(log.reader->super().nr_entries),
               past_count ? "read, as --past-count asks" : "left out; --past-count reads them");
}

}  // namespace

int crash_import_main(const ImportArgs& a) {
  if (a.out.empty()) throw UsageError("nvj crash import: --out DIR is required");
  if (a.no_start_mark && !a.start_mark.empty())
    throw UsageError("nvj crash import: --start-mark and --no-start-mark exclude each other");
  if (a.journal_size > 0 && a.journal_log.empty())
    throw UsageError("nvj crash import: --journal-size without --journal-log");
  std::vector<OpenLog> logs;
  logs.push_back(open_log(a.log, a.size, a.past_count));
  if (!a.journal_log.empty()) logs.push_back(open_log(a.journal_log, a.journal_size, a.past_count));
  std::optional<std::string> start;
  if (!a.start_mark.empty()) {
    start = a.start_mark;
  } else if (!a.no_start_mark && std::all_of(logs.begin(), logs.end(), [](const OpenLog& l) {
               return has_mark(*l.reader, "mkfs");
             })) {
    start = "mkfs";
    std::fprintf(stderr, "nvj crash import: starting after the mark 'mkfs' (--no-start-mark: from the first entry)\n");
  }
  if (!a.journal_base.empty() && a.journal_log.empty())
    throw UsageError("nvj crash import: --journal-base without --journal-log");
  std::unique_ptr<FileImage> base, journal_base;
  if (!a.base.empty()) base = std::make_unique<FileImage>(a.base, FileImage::Mode::read_only);
  if (!a.journal_base.empty()) journal_base = std::make_unique<FileImage>(a.journal_base, FileImage::Mode::read_only);
  std::vector<crashlab::LogSource> sources;
  sources.push_back({"data", logs[0].reader.get(), size_of(logs[0], a.size ? a.size : base ? base->size() : 0, "data"),
                     base.get()});
  if (logs.size() == 2)
    sources.push_back({"journal", logs[1].reader.get(),
                       size_of(logs[1], a.journal_size ? a.journal_size : journal_base ? journal_base->size() : 0,
                               "journal"),
                       journal_base.get()});
  for (const OpenLog& l : logs) say_uncounted(l, a.past_count);

  const std::filesystem::path path = std::filesystem::path(a.out) / "recording.nvjrec";
  refuse_existing(path.string(), "nvj crash import");
  std::filesystem::create_directories(a.out);
  const std::filesystem::path part = path.string() + ".part";
  std::ofstream file(part, std::ios::binary | std::ios::trunc);
  if (!file) throw std::runtime_error(part.string() + ": cannot be written");
  crashlab::LogImportStats stats;
  try {
    stats = crashlab::import_logs(sources, start, [&](std::span<const std::uint8_t> bytes) {
      file.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
      if (!file) throw std::runtime_error(part.string() + ": write failed");
    });
    file.close();
    if (!file) throw std::runtime_error(part.string() + ": write failed");
  } catch (const std::invalid_argument& e) {
    std::filesystem::remove(part);
    throw UsageError(std::string("nvj crash import: ") + e.what());
  } catch (...) {
    std::filesystem::remove(part);
    throw;
  }
  std::filesystem::rename(part, path);

  // What it holds, read back as nvj crash check will read it.
  const MappedFile written(path.string());
  const crashlab::RecordingIndex index(written.bytes());
  std::size_t facts = 0;
  for (const auto& m : index.marks()) facts += m.label.rfind("fact ", 0) == 0;
  for (std::size_t d = 0; d < sources.size(); ++d) {
    const auto& s = stats.logs[d];
    std::printf("%s: %s, %llu MiB, %llu entries (%llu before the start), %llu writes (%llu FUA), %llu flushes, "
                "%llu discards, %llu marks%s\n",
                sources[d].name.c_str(), logs[d].path.c_str(), static_cast<unsigned long long>(sources[d].size / kMiB),
                static_cast<unsigned long long>(logs[d].reader->entries().size()),
                static_cast<unsigned long long>(s.base_entries), static_cast<unsigned long long>(s.writes),
                static_cast<unsigned long long>(s.fua), static_cast<unsigned long long>(s.flushes),
                static_cast<unsigned long long>(s.discards), static_cast<unsigned long long>(s.marks),
                s.dropped_marks ? fmt::format(" ({} dropped: not in the other log)", s.dropped_marks).c_str() : "");
  }
  if (sources.size() == 2)
    std::printf("two logs: in order only at the %llu marks both share; crash points there and at the end\n",
                static_cast<unsigned long long>(stats.shared_marks));
  std::printf("%s: %zu changes, %zu flushes, %zu marks (%zu facts)\n", path.c_str(), index.changes().size(),
              index.flushes().size(), index.marks().size(), facts);
  return 0;
}

int crash_export_main(const ExportArgs& a) {
  if (a.recording.empty()) throw UsageError("nvj crash export: which RECORDING?");
  if (a.format != "dm-log-writes") throw UsageError("nvj crash export: --format dm-log-writes is required");
  if (a.out.empty()) throw UsageError("nvj crash export: --out is required");
  if (!dmlog::valid_sector_size(a.sector_size))
    throw UsageError(fmt::format("nvj crash export: --sector-size {}: a power of two from 512 to 1M", a.sector_size));
  const MappedFile file(a.recording);
  const crashlab::RecordingIndex index(file.bytes());
  std::vector<std::uint8_t> devices;
  for (std::size_t d = 0; d < index.exports().size(); ++d)
    if (a.only.empty() || index.exports()[d].name == a.only) devices.push_back(static_cast<std::uint8_t>(d));
  if (devices.empty()) throw UsageError("nvj crash export: the recording has no export '" + a.only + "'");
  // One log: --out is its file. Several: --out is a folder, NAME.log each.
  const bool folder = devices.size() > 1;
  if (folder) std::filesystem::create_directories(a.out);
  crashlab::LogExportOptions options;
  options.sectorsize = a.sector_size;
  options.base_mark = a.base_mark;
  for (std::uint8_t d : devices) {
    const std::string& name = index.exports()[d].name;
    const std::string path = folder ? (std::filesystem::path(a.out) / (name + ".log")).string() : a.out;
    refuse_existing(path, "nvj crash export");
    const std::string part = path + ".part";
    crashlab::LogExportStats s;
    try {
      NewFile out(part);
      s = crashlab::export_log(index, d, out, options);
      out.close();
    } catch (const std::invalid_argument& e) {
      std::filesystem::remove(part);
      throw std::runtime_error("nvj crash export: the " + name + " export: " + e.what());
    } catch (...) {
      std::filesystem::remove(part);
      throw;
    }
    std::filesystem::rename(part, path);
    std::printf("%s: %s, %llu entries (%llu writes, %llu flushes, %llu discards, %llu marks), %.1f MiB%s\n",
                name.c_str(), path.c_str(), static_cast<unsigned long long>(s.entries),
                static_cast<unsigned long long>(s.writes), static_cast<unsigned long long>(s.flushes),
                static_cast<unsigned long long>(s.discards), static_cast<unsigned long long>(s.marks),
                static_cast<double>(s.bytes) / kMiB,
                s.not_acknowledged ? fmt::format("; {} changes never acknowledged left out", s.not_acknowledged).c_str()
                                   : "");
  }
  return 0;
}

namespace {

constexpr const char* kImportText = R"(Turn a dm-log-writes log (the kernel's dm-log-writes target, QEMU's
blklogwrites driver, what fstests' replay-log replays) into
OUT/recording.nvjrec, which nvj crash check, states and image read: each
write becomes a change acknowledged as it was logged (FUA: durable then),
each FLUSH entry a flush that completes there and covers every write before
it, each discard a trim, each mark a mark with its label (a label that is a
fact, "fact file PATH ...", stays a fact). The entries up to the mark
--start-mark (default: "mkfs", fstests' name for the state after mkfs, when
every log has it) are the starting contents, at no crash point; before the
first entry the device holds --base, the image it was logged from (QEMU's
blklogwrites logs an image as it is), or else zeroes.

What a log cannot tell: when a write was acknowledged (dm-log-writes logs a
write once it completes, and holds it until the flush that covers it: a
write not yet covered by a flush when the log ended is not in it, and the
states it would have made are not checked), and, with two logs
(--journal-log), the order between the devices: then the crash points are
only the marks both logs share and the end. The export's size is --size,
else what the filesystem in the log says (ext4, XFS, btrfs), else what the
log writes, in whole MiB; --base's size when given.
)";

constexpr const char* kExportText = R"(Write a recording's exports as dm-log-writes logs, marks included, for
replay-log and anything else that reads the format: the starting contents
as writes, a flush and the mark --base-mark (default "mkfs"), then each
write, zero (as zeroes) and trim (a discard) once acknowledged, in the
order dm-log-writes logs them (one acknowledged while a flush was in flight
after that flush), every completed flush, every mark, and the mark
"dm-log-writes-end". Changes never acknowledged are left out, as the kernel
logs only what completed. With one export (--export NAME, or a recording
of one) --out is the log's file; otherwise a folder with NAME.log for each.
)";

}  // namespace

CrashSubcommand declare_crash_import(Command& crash) {
  auto import = std::make_shared<ImportArgs>();
  Command imports = crash.subcommand("import", "turn a dm-log-writes log into a recording");
  imports.describe(kImportText);
  imports.add("LOG", import->log, "the data device's log").value_name("FILE");
  imports.add("--out", import->out, "the folder for recording.nvjrec (required)").value_name("DIR");
  imports.add("--journal-log", import->journal_log, "the journal device's log, logged on its own").value_name("FILE");
  imports.size("--size", import->size, 512, std::uint64_t{1} << 50,
               "the data export's size (default: the filesystem's, else what the log writes)")
      .value_name("SIZE");
  imports.size("--journal-size", import->journal_size, 512, std::uint64_t{1} << 50,
               "the journal export's size (default: as --size)")
      .value_name("SIZE");
  imports.add("--start-mark", import->start_mark,
              "the entries up to this mark are the starting contents (default: mkfs, when the log has it)")
      .value_name("LABEL");
  imports.add("--base", import->base,
              "the data device's image when logging began (QEMU's blklogwrites logs an image as it is; default: "
              "zeroes)")
      .value_name("FILE");
  imports.add("--journal-base", import->journal_base, "the journal device's image when logging began")
      .value_name("FILE");
  imports.flag("--no-start-mark", import->no_start_mark, "every entry is a change, from a device of zeroes");
  imports.flag("--past-count", import->past_count,
               "also read whole entries past the super block's count (a log whose writer stopped early)");
  return {imports, [import] {
            if (import->log.empty()) throw UsageError("nvj crash import: which LOG?");
            return crash_import_main(*import);
          }};
}

CrashSubcommand declare_crash_export(Command& crash) {
  auto exported = std::make_shared<ExportArgs>();
  Command exports = crash.subcommand("export", "write a recording's exports as dm-log-writes logs");
  exports.describe(kExportText);
  exports.add("RECORDING", exported->recording, "the recording (record=FILE)").value_name("FILE");
  exports.choice("--format", exported->format, {"dm-log-writes"}, "the log's format (required)");
  exports.add("--out", exported->out, "the log's file, or with several exports their folder (required)")
      .value_name("PATH");
  exports.add("--export", exported->only, "only this export (data, journal)").value_name("NAME");
  exports.count("--sector-size", exported->sector_size, 512u, 1u << 20,
                "the log's sector size, a power of two: its unit of addresses (default 512)")
      .value_name("BYTES");
  exports.add("--base-mark", exported->base_mark, "the mark after the starting contents (default mkfs)")
      .value_name("LABEL");
  return {exports, [exported] { return crash_export_main(*exported); }};
}

}  // namespace nvj::cli
