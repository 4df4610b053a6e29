// SPDX-License-Identifier: BSD-3-Clause
// LabConfig: the server's configuration as parsed from key=value parameters
// (nbdkit's config callback hands them over one at a time). Parsing is here,
// not in the plugin, so it is tested without nbdkit.
//
// Every error names the parameter as the user wrote it ("data=12Q: ...").
#pragma once

#include <cstdint>
#include <optional>
#include <map>
#include <stdexcept>
#include <string>
#include <string_view>

#include "server/lab/filesystem.h"
#include "server/model/device_traits.h"

namespace nvj {

class ConfigError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// One export: its size (if given), its file (if any; memory otherwise) and
// its timing model (if given; the role's default otherwise).
struct StoreSpec {
  std::optional<std::uint64_t> size;
  std::optional<std::string> file;   // absolute
  std::optional<std::string> model;  // a checked ModelSpec text
  TraitOverrides traits;             // what it tells the host, where not its model's
  // The parameter that set the logical sector size, as written, for errors
  // that need the export's size ("data-sector-size=4096").
  std::string sector_param;
};

// Where metrics= listens: a host name or address (empty: the loopback
// address) and a port, and the value as written (for messages).
struct ListenAddress {
  std::string host;
  std::uint16_t port = 0;
  std::string text;
};

// "9630", ":9630", "ADDRESS:9630", "[IPV6]:9630" -> host and port. Throws
// std::invalid_argument saying what is wrong. The host is resolved when the
// listener binds, not here.
ListenAddress parse_listen_address(std::string_view text);

struct LabConfig {
  StoreSpec data;
  StoreSpec journal;
  std::optional<std::string> control;  // the control socket's path, absolute
  std::optional<ListenAddress> metrics;  // GET /metrics over TCP
  std::optional<std::uint64_t> crash_log;  // bytes the power-loss log may hold
  std::optional<std::string> record;       // record from the start into this file, absolute
  std::optional<std::uint64_t> record_buffer;  // bytes of frames waiting for the recording's file
  bool stats = true;                       // record per-request statistics
  bool journal_trace = true;               // decode the journal live
  std::optional<std::string> trace_file;   // one JSON line per transaction, absolute
  FilesystemSpec fs;                       // what the exports start with
  // Whether the server has a journal export: with an external journal, or
  // blank disks (fs=none).
  bool journal_export() const { return !fs.format || fs.journal == JournalPlacement::external; }
};

// Text for nbdkit's --help: one entry per parameter, in a table of their
// own (the parser does not read it: tests compare the two).
std::string lab_parameters_help();

// Limits every export size is checked against (also for sizes read from files).
struct SizeLimits {
  static constexpr std::uint64_t kSector = 512;
  static constexpr std::uint64_t kDefaultData = std::uint64_t{1} << 30;     // 1 GiB
  static constexpr std::uint64_t kDefaultJournal = std::uint64_t{64} << 20;  // 64 MiB
  static constexpr std::uint64_t kDefaultRecordBuffer = std::uint64_t{64} << 20;  // 64 MiB
  // jbd2 needs at least 1024 journal blocks (JBD2_MIN_JOURNAL_BLOCKS,
  // include/linux/jbd2.h): 1 MiB with 1k blocks. mke2fs accepts at most
  // 10,240,000 journal blocks (misc/util.c figure_journal_size): 39 GiB with
  // 4k blocks.
  static constexpr std::uint64_t kMinJournal = std::uint64_t{1024} * 1024;
  static constexpr std::uint64_t kMaxJournal = std::uint64_t{10240000} * 4096;
  static constexpr std::uint64_t kMaxFile = std::uint64_t{1} << 62;  // fits off_t and NBD's size
  static constexpr std::uint64_t kDefaultCrashLog = std::uint64_t{256} << 20;
};

// The models an export gets when none is given (docs/design.md, "Timing
// models"): a spinning data disk and an NVRAM journal.
constexpr const char* kDefaultDataModel = "hdd";
constexpr const char* kDefaultJournalModel = "nvram";
// journal-model= value that times an internal journal with the data disk's
// own model (the same arm and cache).
constexpr std::string_view kJournalOnDataDisk = "data";

// Checks a size for export `role` ("data" or "journal"), in sparse memory or
// in a file. Returns an empty string when it is fine, else why not.
std::string check_export_size(std::string_view role, std::uint64_t bytes, bool in_memory);

class ConfigParser {
 public:
  // One key=value, as nbdkit's config callback receives it.
  void set(std::string_view key, std::string_view value);

  // Cross-parameter checks; the finished configuration.
  LabConfig finish() const;

 private:
  void set_size(std::string_view key, std::string_view value, std::optional<std::uint64_t>& out);
  void set_file(std::string_view key, std::string_view value, std::optional<std::string>& out);
  void set_model(std::string_view key, std::string_view value, std::optional<std::string>& out);
  void set_fs(std::string_view key, std::string_view value);
  // data-rotational=, journal-write-cache=, ...: false if `key` is none of them.
  bool set_trait(std::string_view key, std::string_view value);

  LabConfig config_;
  std::map<std::string, std::string, std::less<>> given_;  // key -> value as written
};

}  // namespace nvj
