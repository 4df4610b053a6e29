// SPDX-License-Identifier: BSD-3-Clause
#include "server/lab/config.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <filesystem>

#include "common/size.h"
#include "server/model/make_model.h"
#include "server/store/memory_store.h"

namespace nvj {
namespace {

std::string prefix(std::string_view key, std::string_view value) {
  return std::string(key) + "=" + std::string(value) + ": ";
}

// The documented parameters, in the order --help lists them.
struct ParameterDoc {
  std::string_view key;
  std::string_view form;
  std::string_view help;
};

constexpr std::array kParameters{
    ParameterDoc{"data", "SIZE",
                 "Size of the data export (default 1G). With data-file, an existing file is extended to SIZE, "
                 "never truncated; without SIZE its own size is served."},
    ParameterDoc{"data-file", "PATH",
                 "Keep the data export in PATH (created if missing, never truncated if present) instead of "
                 "sparse memory. Writes are durable after a flush or a FUA write."},
    ParameterDoc{"journal", "SIZE",
                 "Size of the journal export (default 64M; 1M to 39G, the range jbd2 and mke2fs accept)."},
    ParameterDoc{"journal-file", "PATH",
                 "Keep the journal export in PATH. The journal is NVRAM: every acknowledged write is durable "
                 "(written with O_DSYNC), so a file-backed journal is as slow as PATH's disk."},
    ParameterDoc{"control", "PATH",
                 "Serve the control API (HTTP over a Unix socket, mode 0600) at PATH: GET /stats, GET /metrics, "
                 "POST /reset-stats, POST /mark?label=, POST /model?export=&model=. "
                 "curl --unix-socket PATH http://lab/stats"},
    ParameterDoc{"metrics", "[ADDRESS:]PORT",
                 "Serve GET /metrics (Prometheus text) over HTTP on TCP, and nothing else: on 127.0.0.1 when "
                 "ADDRESS is empty or omitted (metrics=9630), on ADDRESS otherwise (0.0.0.0:9630, [::1]:9630). "
                 "The control API stays on the control= socket."},
    ParameterDoc{"crash-log", "SIZE",
                 "With control=, every write since the last flush is kept (old and new bytes) so that POST /crash "
                 "can drop what a power cut would; SIZE bounds that memory (default 256M), past it the oldest "
                 "writes count as destaged."},
    ParameterDoc{"record", "PATH",
                 "Record everything both exports receive from the start into PATH (created; an existing file is "
                 "refused), for the crash lab: the starting contents, every write with its bytes, zero, trim, "
                 "FUA, acknowledgement, flush and mark. With control= a recording can also start and stop at run "
                 "time (POST /record/start?file=PATH, POST /record/stop)."},
    ParameterDoc{"record-buffer", "SIZE",
                 "Memory for recorded frames waiting to be written (default 64M): a recording that falls this "
                 "far behind stops, with an error in the log, and the server serves on."},
    ParameterDoc{"stats", "on|off",
                 "Record per-request statistics (default on): counts, latency histograms, queue depth, device "
                 "time. Off saves a clock read and a few atomic additions per request."},
    ParameterDoc{"journal-trace", "on|off",
                 "Decode the jbd2 journal live (default on): transactions, commit latency, journal fill, and "
                 "each data write classed as journal, checkpoint, ordered or other; GET /journal, nvj journal top."},
    ParameterDoc{"trace-file", "PATH",
                 "Append one JSON line per committed transaction to PATH (created if missing): tid, times, "
                 "blocks by kind, revokes, flushes and FUA writes around the commit."},
    ParameterDoc{"data-model", "MODEL[:KEY=VALUE,...]",
                 "Timing of the data export: hdd (default: a 7200 rpm disk with a 64M volatile write cache), "
                 "ssd, nvram or none (no timing). Keys per model in nbdkit-nvjournal-plugin(1), e.g. "
                 "hdd:rpm=5400,cache=off."},
    ParameterDoc{"journal-model", "MODEL[:KEY=VALUE,...]",
                 "Timing of the journal export, or of the internal journal's region of the data export: nvram "
                 "(default: write 2us, read 1us, 2G/s, 4 channels), ssd, hdd, none, or data (an internal journal "
                 "on the data disk's own model, counted apart), e.g. nvram:latency=10us,bandwidth=0."},
    ParameterDoc{"data-rotational", "yes|no",
                 "Whether the data export tells the host it rotates (default: its model's; hdd yes, ssd and nvram "
                 "no). The kernel gives a rotating disk an I/O scheduler that sorts requests, and btrfs leaves "
                 "its ssd mode off on it."},
    ParameterDoc{"journal-rotational", "yes|no", "The same for the journal export."},
    ParameterDoc{"data-write-cache", "write-back|write-through",
                 "Whether the data export tells the host it has a volatile write cache, so that the kernel sends "
                 "flushes and FUA writes (default: its model's: write-back with hdd's and ssd's cache on, "
                 "write-through for nvram or cache=off). write-through on a model with a volatile cache is a disk "
                 "that lies: nothing flushes it, and a power cut loses what it held."},
    ParameterDoc{"journal-write-cache", "write-back|write-through",
                 "The same for the journal export (default write-through on nvram)."},
    ParameterDoc{"data-trim", "yes|no",
                 "Whether the data export takes discards (default: its model's; ssd yes, hdd and nvram no)."},
    ParameterDoc{"journal-trim", "yes|no", "The same for the journal export."},
    ParameterDoc{"data-zero", "yes|no",
                 "Whether the data export zeroes ranges itself (default: its model's; ssd yes, hdd and nvram "
                 "no: zeroes then reach the device as writes)."},
    ParameterDoc{"journal-zero", "yes|no", "The same for the journal export."},
    ParameterDoc{"data-sector-size", "LOGICAL[/PHYSICAL]",
                 "The data export's sector sizes, as fdisk shows them (default: its model's; hdd and ssd "
                 "512/4096, nvram 512/512): the NBD minimum and preferred block sizes. Powers of two, the "
                 "logical one 512 to 4096, the physical one at least the logical one and at most 64K; the "
                 "export's size must be a whole number of logical sectors."},
    ParameterDoc{"journal-sector-size", "LOGICAL[/PHYSICAL]", "The same for the journal export."},
    ParameterDoc{"fs", "ext4|none",
                 "ext4 (default): new exports start with an ext4 filesystem the kernel mounts as it is; an "
                 "export that already holds ext4 is served as it is. none: blank disks."},
    ParameterDoc{"fs-journal", "external|internal[:SIZE]|none",
                 "Where the filesystem's journal is: external (default) on the journal export, linked by uuid "
                 "(mount with -o journal_path=); internal, inode 8 inside the data export, SIZE or mke2fs's size, "
                 "its blocks timed and made durable by journal-model (there is no journal export then); none."},
    ParameterDoc{"fs-populate", "DIR",
                 "Copy DIR's tree into the new filesystem, like mke2fs -d: files (holes kept), directories, "
                 "symlinks, hard links, devices, FIFOs, sockets, modes, owners, times. A tree that does not fit "
                 "stops the server before anything is served."},
    ParameterDoc{"fs-block-size", "1024|2048|4096",
                 "Block size of the new filesystem (default: 1024 below 512M, else 4096, as mke2fs)."},
    ParameterDoc{"fs-label", "LABEL", "Volume label of the new filesystem (at most 16 bytes)."},
    ParameterDoc{"fs-free", "zeroes|old-data",
                 "What the new filesystem's free blocks hold: zeroes (default), as a new disk's; old-data, a "
                 "recognisable text (\"nvjournal: old data, written by no file of this run\"), as a disk used "
                 "before holds another file's deleted data. A file that shows it after a crash reads blocks "
                 "nothing wrote for it (the crash lab's nostale rule). A recording keeps each whole 4 KiB block of it "
                 "as a range, not its bytes."},
    ParameterDoc{"fs-format", "auto|force",
                 "auto (default): format only exports that hold nothing; refuse one that holds data that is not "
                 "ext4. force: format whatever the exports hold (everything in them is lost)."},
};

}  // namespace

std::string lab_parameters_help() {
  std::string out;
  for (const auto& p : kParameters) {
    if (!out.empty()) out += '\n';
    out += std::string(p.key) + "=" + std::string(p.form) + "\n    " + std::string(p.help);
  }
  return out;
}

ListenAddress parse_listen_address(std::string_view text) {
  const std::string_view example = "expected [ADDRESS:]PORT, e.g. 9630, 127.0.0.1:9630, 0.0.0.0:9630 or [::1]:9630";
  ListenAddress out{{}, 0, std::string(text)};
  std::string_view port = text;
  if (!text.empty() && text.front() == '[') {
    const std::size_t close = text.find(']');
    if (close == std::string_view::npos || close + 1 >= text.size() || text[close + 1] != ':')
      throw std::invalid_argument("an address in brackets must be followed by :PORT, e.g. [::1]:9630");
    out.host = std::string(text.substr(1, close - 1));
    if (out.host.empty()) throw std::invalid_argument("the address in brackets is empty");
    port = text.substr(close + 2);
  } else if (const std::size_t colon = text.rfind(':'); colon != std::string_view::npos) {
    if (text.find(':') != colon)
      throw std::invalid_argument("an IPv6 address goes in brackets, e.g. [::1]:9630");
    out.host = std::string(text.substr(0, colon));
    port = text.substr(colon + 1);
  }
  if (port.empty()) throw std::invalid_argument("no port: " + std::string(example));
  unsigned long number = 0;
  const auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), number);
  if (ec == std::errc::invalid_argument || end != port.data() + port.size())
    throw std::invalid_argument("'" + std::string(port) + "' is not a port: " + std::string(example));
  if (ec == std::errc::result_out_of_range || number == 0 || number > 65535)
    throw std::invalid_argument("port " + std::string(port) + " is out of range: a port is 1 to 65535");
  out.port = static_cast<std::uint16_t>(number);
  return out;
}

std::string check_export_size(std::string_view role, std::uint64_t bytes, bool in_memory) {
  if (bytes == 0) return "the size must not be zero";
  if (bytes % SizeLimits::kSector != 0) return "the size must be a multiple of 512 bytes (a sector)";
  if (role == "journal") {
    if (bytes < SizeLimits::kMinJournal) return "a journal must be at least 1 MiB (1024 jbd2 blocks of 1 KiB)";
    if (bytes > SizeLimits::kMaxJournal)
      return "a journal may be at most " + format_size(SizeLimits::kMaxJournal) +
             " (10,240,000 blocks of 4 KiB, the most mke2fs and jbd2 accept)";
  }
  if (in_memory && bytes > MemoryStore::kMaxSize) return "a sparse memory export may be at most 256 TiB; use a file";
  if (bytes > SizeLimits::kMaxFile) return "the size may be at most 4 EiB";
  return {};
}

void ConfigParser::set(std::string_view key, std::string_view value) {
  if (given_.contains(key)) throw ConfigError(prefix(key, value) + "'" + std::string(key) + "' is given twice");
  if (key == "data") {
    set_size(key, value, config_.data.size);
  } else if (key == "journal") {
    set_size(key, value, config_.journal.size);
  } else if (key == "data-file") {
    set_file(key, value, config_.data.file);
  } else if (key == "journal-file") {
    set_file(key, value, config_.journal.file);
  } else if (key == "control") {
    set_file(key, value, config_.control);
  } else if (key == "metrics") {
    try {
      config_.metrics = parse_listen_address(value);
    } catch (const std::invalid_argument& e) {
      throw ConfigError(prefix(key, value) + e.what());
    }
  } else if (key == "stats") {
    if (value != "on" && value != "off") throw ConfigError(prefix(key, value) + "expected on or off");
    config_.stats = value == "on";
  } else if (key == "crash-log") {
    set_size(key, value, config_.crash_log);
  } else if (key == "record") {
    set_file(key, value, config_.record);
  } else if (key == "record-buffer") {
    set_size(key, value, config_.record_buffer);
  } else if (key == "journal-trace") {
    if (value != "on" && value != "off") throw ConfigError(prefix(key, value) + "expected on or off");
    config_.journal_trace = value == "on";
  } else if (key == "trace-file") {
    set_file(key, value, config_.trace_file);
  } else if (key == "data-model") {
    set_model(key, value, config_.data.model);
  } else if (key == "journal-model") {
    if (value == kJournalOnDataDisk) {
      config_.journal.model = std::string(value);
    } else {
      set_model(key, value, config_.journal.model);
    }
  } else if (key.rfind("fs", 0) == 0 && (key.size() == 2 || key[2] == '-')) {
    set_fs(key, value);
  } else if (set_trait(key, value)) {
  } else {
    throw ConfigError(prefix(key, value) + "unknown parameter '" + std::string(key) +
                      "' (nbdkit nvjournal --help lists them)");
  }
  given_.emplace(key, value);
}

void ConfigParser::set_size(std::string_view key, std::string_view value, std::optional<std::uint64_t>& out) {
  std::uint64_t bytes = 0;
  try {
    bytes = parse_size(value);
  } catch (const std::invalid_argument& e) {
    throw ConfigError(prefix(key, value) + e.what());
  }
  out = bytes;
}

void ConfigParser::set_file(std::string_view key, std::string_view value, std::optional<std::string>& out) {
  if (value.empty()) throw ConfigError(prefix(key, value) + "the path is empty");
  // nbdkit changes to / when it becomes a daemon: keep paths absolute.
  out = std::filesystem::absolute(std::filesystem::path(value)).lexically_normal().string();
}

void ConfigParser::set_model(std::string_view key, std::string_view value, std::optional<std::string>& out) {
  try {
    check_model_spec(ModelSpec::parse(value));
  } catch (const std::invalid_argument& e) {
    throw ConfigError(prefix(key, value) + e.what());
  }
  out = std::string(value);
}

bool ConfigParser::set_trait(std::string_view key, std::string_view value) {
  StoreSpec* spec = nullptr;
  std::string_view trait;
  for (auto [role, store] : {std::pair{std::string_view("data-"), &config_.data}, {"journal-", &config_.journal}})
    if (key.rfind(role, 0) == 0) {
      spec = store;
      trait = key.substr(role.size());
    }
  if (spec == nullptr) return false;
  TraitOverrides& t = spec->traits;
  try {
    if (trait == "rotational") {
      t.rotational = parse_yes_no(value);
    } else if (trait == "write-cache") {
      t.write_back = parse_write_cache(value);
    } else if (trait == "trim") {
      t.trim = parse_yes_no(value);
    } else if (trait == "zero") {
      t.zero = parse_yes_no(value);
    } else if (trait == "sector-size") {
      parse_sector_sizes(value, t);
      spec->sector_param = std::string(key) + "=" + std::string(value);
    } else {
      return false;
    }
  } catch (const std::invalid_argument& e) {
    throw ConfigError(prefix(key, value) + e.what());
  }
  return true;
}

void ConfigParser::set_fs(std::string_view key, std::string_view value) {
  FilesystemSpec& fs = config_.fs;
  if (key == "fs") {
    if (value != "ext4" && value != "none") throw ConfigError(prefix(key, value) + "expected ext4 or none");
    fs.format = value == "ext4";
  } else if (key == "fs-journal") {
    if (value == "external") {
      fs.journal = JournalPlacement::external;
    } else if (value == "none") {
      fs.journal = JournalPlacement::none;
    } else if (value == "internal" || value.rfind("internal:", 0) == 0) {
      fs.journal = JournalPlacement::internal;
      if (value.size() > 9) {
        try {
          fs.internal_journal_bytes = parse_size(value.substr(9));
        } catch (const std::invalid_argument& e) {
          throw ConfigError(prefix(key, value) + e.what());
        }
        const std::string why = check_export_size("journal", *fs.internal_journal_bytes, false);
        if (!why.empty()) throw ConfigError(prefix(key, value) + why);
      }
    } else {
      throw ConfigError(prefix(key, value) + "expected external, internal, internal:SIZE or none");
    }
  } else if (key == "fs-populate") {
    std::optional<std::string> dir;
    set_file(key, value, dir);
    std::error_code error;
    if (!std::filesystem::is_directory(*dir, error)) throw ConfigError(prefix(key, value) + "is not a directory");
    fs.populate = dir;
  } else if (key == "fs-block-size") {
    if (value != "1024" && value != "2048" && value != "4096") throw ConfigError(prefix(key, value) + "expected 1024, 2048 or 4096");
    fs.block_size = value == "1024" ? 1024 : value == "2048" ? 2048 : 4096;
  } else if (key == "fs-label") {
    if (value.size() > 16) throw ConfigError(prefix(key, value) + "a label has at most 16 bytes");
    fs.label = std::string(value);
  } else if (key == "fs-free") {
    if (value != "zeroes" && value != "old-data") throw ConfigError(prefix(key, value) + "expected zeroes or old-data");
    fs.free_old_data = value == "old-data";
  } else if (key == "fs-format") {
    if (value != "auto" && value != "force") throw ConfigError(prefix(key, value) + "expected auto or force");
    fs.force = value == "force";
  } else {
    throw ConfigError(prefix(key, value) + "unknown parameter '" + std::string(key) +
                      "' (nbdkit nvjournal --help lists them)");
  }
}

LabConfig ConfigParser::finish() const {
  auto check = [this](std::string_view role, const StoreSpec& spec) {
    if (!spec.size) return;
    const std::string why = check_export_size(role, *spec.size, !spec.file);
    if (!why.empty()) throw ConfigError(prefix(role, given_.find(role)->second) + why);
  };
  if (config_.crash_log && !config_.control)
    throw ConfigError(prefix("crash-log", given_.find("crash-log")->second) +
                      "power cuts come through the control socket: give control=PATH too");
  if (config_.crash_log && *config_.crash_log < (std::uint64_t{1} << 20))
    throw ConfigError(prefix("crash-log", given_.find("crash-log")->second) + "must be at least 1 MiB");
  if (config_.record_buffer && *config_.record_buffer < (std::uint64_t{1} << 20))
    throw ConfigError(prefix("record-buffer", given_.find("record-buffer")->second) + "must be at least 1 MiB");
  if (config_.record && std::filesystem::exists(*config_.record))
    throw ConfigError(prefix("record", given_.find("record")->second) +
                      "the file exists: a recording never overwrites a file");
  check("data", config_.data);
  check("journal", config_.journal);
  if (!config_.fs.format) {
    for (const char* key : {"fs-journal", "fs-populate", "fs-block-size", "fs-label", "fs-free", "fs-format"})
      if (const auto it = given_.find(key); it != given_.end())
        throw ConfigError(prefix(key, it->second) + "formats the filesystem, but fs=none serves blank disks");
  }
  if (!config_.journal_export()) {
    // The journal is inside the data export (or there is none): no journal export to size or keep.
    for (const char* key : {"journal", "journal-file", "journal-rotational", "journal-write-cache", "journal-trim",
                            "journal-zero", "journal-sector-size"})
      if (const auto it = given_.find(key); it != given_.end())
        throw ConfigError(prefix(key, it->second) + "there is no journal export with fs-journal=" +
                          given_.find("fs-journal")->second +
                          (config_.fs.journal == JournalPlacement::internal && std::string_view(key) == "journal"
                               ? " (size the internal journal with fs-journal=internal:SIZE)"
                               : ""));
  }
  if (const auto it = given_.find("trace-file"); it != given_.end()) {
    if (!config_.journal_trace)
      throw ConfigError(prefix("trace-file", it->second) + "traces the journal, but journal-trace=off");
    if (config_.fs.format && config_.fs.journal == JournalPlacement::none)
      throw ConfigError(prefix("trace-file", it->second) + "there is no journal to trace with fs-journal=none");
  }
  if (config_.journal.model == kJournalOnDataDisk && config_.fs.journal != JournalPlacement::internal)
    throw ConfigError(prefix("journal-model", kJournalOnDataDisk) +
                      "puts an internal journal on the data disk's model: it needs fs-journal=internal");
  if (config_.data.file && config_.journal.file && *config_.data.file == *config_.journal.file)
    throw ConfigError(prefix("journal-file", given_.find("journal-file")->second) + "is the same file as data-file");
  LabConfig out = config_;
  // The kernel mounts no ext4 whose blocks are smaller than a sector of its
  // disk or of its journal's.
  for (const StoreSpec* spec : {&config_.data, &config_.journal}) {
    if (!spec->traits.logical_sector || !config_.fs.format) continue;
    const std::uint32_t sector = *spec->traits.logical_sector;
    if (config_.fs.block_size != 0 && config_.fs.block_size < sector)
      throw ConfigError(prefix("fs-block-size", given_.find("fs-block-size")->second) + "is smaller than the " +
                        std::to_string(sector) + "-byte logical sectors of " + spec->sector_param +
                        ": the kernel would not mount it");
    out.fs.sector_size = std::max(out.fs.sector_size, sector);
  }
  return out;
}

}  // namespace nvj
