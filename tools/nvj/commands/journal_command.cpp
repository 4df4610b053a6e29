// SPDX-License-Identifier: BSD-3-Clause
// nvj journal: the jbd2 journal offline (inspect, replay) and live (top).
#include <signal.h>
#include <unistd.h>

#include <fmt/format.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <ctime>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "common/command_line.h"
#include "common/control_client.h"
#include "common/json.h"
#include "fscore/ext4/journal_replay.h"
#include "fscore/jbd2/journal_recovery.h"
#include "fscore/uuid.h"
#include "fscore/xfs/log_scan.h"
#include "fscore/xfs/superblock.h"
#include "tools/nvj/commands.h"
#include "tools/nvj/host/files/file_image.h"
#include "tools/nvj/host/processes/interrupt.h"

namespace nvj::cli {
namespace {

constexpr const char* kJournalText = R"(The jbd2 journal offline (inspect, replay: IMAGE is a filesystem with an
internal journal, a filesystem with --journal its external journal device, or
a journal device alone) or live (top: a running server's). inspect reads XFS
logs too.
)";

constexpr const char* kInspectText = R"(The journal superblock and the transactions recovery would find in the log,
each with its blocks, revokes, checksums and commit time. For XFS (IMAGE an
XFS, with --journal its log device when the log is external, or a log device
alone): every log record in block order, its LSN, tail LSN, length,
operations and CRC, and the head and tail after the newest record.
)";

constexpr const char* kReplayText = R"(Apply the committed transactions to IMAGE exactly as e2fsck -E journal_only -y
does (revokes, escapes, checksums, a log that wraps) and mark the journal
clean: the images come out byte for byte as e2fsck leaves them. Do not replay
a mounted filesystem.
)";

constexpr const char* kTopText = R"(A running server's live journal (GET /journal): transactions, commit latency,
fill, the data disk's traffic by class, the latest transactions; redrawn
every --interval seconds.
)";

struct JournalArgs {
  std::string operand, journal;
  bool json = false, once = false;
  std::uint32_t now = 0;
  bool now_given = false;
  std::uint64_t interval = 1;
};

std::string features(const fscore::jbd2::JournalSuperblock& sb) {
  using namespace fscore::jbd2::feature;
  std::string out;
  auto add = [&](bool on, const char* name) {
    if (!on) return;
    if (!out.empty()) out += ' ';
    out += name;
  };
  add(sb.feature_compat & kCompatChecksum, "checksum_v1");
  add(sb.feature_incompat & kIncompatRevoke, "revoke");
  add(sb.feature_incompat & kIncompat64bit, "64bit");
  add(sb.feature_incompat & kIncompatAsyncCommit, "async_commit");
  add(sb.feature_incompat & kIncompatCsumV2, "checksum_v2");
  add(sb.feature_incompat & kIncompatCsumV3, "checksum_v3");
  add(sb.feature_incompat & kIncompatFastCommit, "fast_commit");
  return out.empty() ? "none" : out;
}

struct Opened {
  std::unique_ptr<FileImage> image;
  std::unique_ptr<FileImage> journal;
};

Opened open_images(const std::string& image, const std::optional<std::string>& journal, FileImage::Mode mode) {
  Opened o;
  o.image = std::make_unique<FileImage>(image, mode);
  if (journal) o.journal = std::make_unique<FileImage>(*journal, mode);
  return o;
}

// When a transaction's commit block was written: "1700000000.000000123".
std::string commit_time(const fscore::jbd2::ScannedTransaction& t) {
  return fmt::format("{}.{:09d}", t.commit_seconds, t.commit_nanoseconds);
}

Json optional_number(const std::optional<std::uint32_t>& n) { return n ? Json(*n) : Json(nullptr); }

// inspect --json: the superblock, the scan's outcome and every transaction.
Json inspect_json(const std::string& placement, std::uint32_t block_size, const fscore::jbd2::JournalSuperblock& sb,
                  const fscore::jbd2::JournalScan& scan, std::uint64_t replayed) {
  Json transactions = Json::array();
  for (const auto& t : scan.transactions)
    transactions.push_back(Json{{"tid", t.tid},
                                {"first_log_block", t.first_log_block},
                                {"commit_log_block", optional_number(t.commit_log_block)},
                                {"descriptor_blocks", t.descriptor_blocks},
                                {"logged_blocks", t.logged_blocks},
                                {"revoke_blocks", t.revoke_blocks},
                                {"revoked_blocks", t.revoked},
                                {"bad_descriptor_checksums", t.bad_descriptor_checksums},
                                {"bad_block_checksums", t.bad_block_checksums},
                                {"bad_commit_checksum", t.bad_commit_checksum},
                                {"commit_time", commit_time(t)},
                                {"replayed", t.replayed}});
  return Json{{"placement", placement},
              {"block_size", block_size},
              {"maxlen", sb.maxlen},
              {"first", sb.first},
              {"sequence", sb.sequence},
              {"start", sb.start},
              {"head", sb.head},
              {"errno", sb.errno_value},
              {"uuid", fscore::format_uuid(sb.uuid)},
              {"features", features(sb)},
              {"users", sb.nr_users},
              {"needs_recovery", scan.needs_recovery},
              {"start_tid", scan.start_tid},
              {"end_tid", scan.end_tid},
              {"error", scan.error},
              {"end", scan.end_reason},
              {"failed_commit", optional_number(scan.failed_commit)},
              {"transactions", transactions},
              {"replayed_transactions", replayed}};
}

// A part of a device: an internal XFS log's region of the data device.
class SliceSource final : public fscore::BlockSource {
 public:
  SliceSource(const fscore::BlockSource& base, std::uint64_t offset, std::uint64_t size)
      : base_(base), offset_(offset), size_(size) {}
  std::uint64_t size() const override { return size_; }
  void read(std::uint64_t offset, std::span<std::uint8_t> bytes) const override {
    if (offset > size_ || bytes.size() > size_ - offset) throw std::out_of_range("a read past the log's end");
    base_.read(offset_ + offset, bytes);
  }

 private:
  const fscore::BlockSource& base_;
  std::uint64_t offset_, size_;
};

// Whether `device` starts with an XFS log record (a log device alone).
bool starts_with_xfs_log(const fscore::BlockSource& device) {
  std::array<std::uint8_t, fscore::xfs::kBasicBlock> block{};
  if (device.size() < block.size()) return false;
  device.read(0, block);
  return fscore::xfs::parse_record_header(block).has_value();
}

// inspect of an XFS log: every record header in block order (as
// xfs_logprint -d lists them), each CRC, the newest record's head and tail.
int inspect_xfs(const fscore::BlockSource& log, std::uint64_t log_bytes, const std::string& placement, bool json) {
  using namespace fscore::xfs;
  const LogScan scan = scan_log(log, log_bytes);
  if (json) {
    Json records = Json::array();
    for (const ScannedRecord& r : scan.records)
      records.push_back(Json{{"block", r.block},
                             {"cycle", r.header.cycle},
                             {"version", r.header.version},
                             {"lsn", to_string(r.header.lsn)},
                             {"tail_lsn", to_string(r.header.tail)},
                             {"len", r.header.len},
                             {"operations", r.header.operations},
                             {"size", r.header.size},
                             {"crc", to_string(r.crc)},
                             {"stale", r.overwritten}});
    const Json newest = scan.newest ? Json(scan.records[*scan.newest].block) : Json(nullptr);
    std::printf("%s\n", to_json_text(Json{{"format", "xfs"},
                                          {"placement", placement},
                                          {"log_blocks", scan.log_blocks},
                                          {"newest_block", newest},
                                          {"head_lsn", scan.newest ? Json(to_string(scan.head)) : Json(nullptr)},
                                          {"tail_lsn", scan.newest ? Json(to_string(scan.tail)) : Json(nullptr)},
                                          {"crc_failures", scan.crc_failures},
                                          {"records", records}})
                             .c_str());
    return 0;
  }
  fmt::print("xfs log: {}, {} blocks of 512 bytes, {} records, {} CRC failures\n", placement, scan.log_blocks,
             scan.records.size(), scan.crc_failures);
  if (scan.newest)
    fmt::print("newest record at block {}: head {}, tail {}\n", scan.records[*scan.newest].block, to_string(scan.head),
               to_string(scan.tail));
  else
    fmt::print("no whole record: an empty or unreadable log\n");
  if (scan.records.empty()) return 0;
  fmt::print("\n{:>10} {:>8} {:>14} {:>14} {:>8} {:>6}  {}\n", "block", "cycle", "lsn", "tail lsn", "len", "ops", "crc");
  for (const ScannedRecord& r : scan.records)
    fmt::print("{:>10} {:>8} {:>14} {:>14} {:>8} {:>6}  {}{}\n", r.block, r.header.cycle, to_string(r.header.lsn),
               to_string(r.header.tail), r.header.len, r.header.operations, to_string(r.crc),
               r.overwritten ? " (stale: a later cycle wrote over it)" : "");
  return 0;
}

int inspect(const std::string& path, const std::optional<std::string>& journal_path, bool json) {
  Opened o = open_images(path, journal_path, FileImage::Mode::read_only);
  if (const auto place = fscore::xfs::locate_log(*o.image)) {
    if (place->external) {
      if (!o.journal)
        throw UsageError("nvj journal inspect: " + path + " is an XFS whose log is on another device: --journal LOG");
      return inspect_xfs(*o.journal, std::min(place->length, o.journal->size()), "external", json);
    }
    if (o.journal) throw UsageError("nvj journal inspect: " + path + " is an XFS with its log inside: no --journal");
    const SliceSource region(*o.image, place->offset, place->length);
    return inspect_xfs(region, place->length, "internal", json);
  }
  if (!o.journal && starts_with_xfs_log(*o.image)) return inspect_xfs(*o.image, o.image->size(), "log device", json);
  fscore::jbd2::JournalSuperblock sb;
  std::vector<fscore::jbd2::LogRun> runs;
  const fscore::BlockSource* device = o.image.get();
  std::string placement;
  std::uint32_t bs = 0;
  const auto info = fscore::ext4::read_image(*o.image);
  if (info.journal_device) {
    if (journal_path) throw UsageError("nvj journal inspect: " + path + " is a journal device already");
    sb = info.journal_super;
    bs = info.block_size;
    placement = "journal device";
  } else {
    const auto where = fscore::ext4::locate_journal(*o.image, o.journal.get());
    sb = where.super;
    runs = where.runs;
    bs = where.fs.block_size;
    placement = runs.empty() ? "external" : "internal";
    if (o.journal) device = o.journal.get();
  }
  const fscore::jbd2::JournalLog log(*device, bs, sb.maxlen, runs);
  const fscore::jbd2::JournalScan scan = fscore::jbd2::scan_journal(log, sb);
  std::uint64_t replayed = 0;
  for (const auto& t : scan.transactions) replayed += t.replayed;

  if (json) {
    std::printf("%s\n", to_json_text(inspect_json(placement, bs, sb, scan, replayed)).c_str());
    return 0;
  }
  fmt::print("journal: {}, {} blocks of {} bytes, log from block {}\n", placement, sb.maxlen, bs, sb.first);
  fmt::print("uuid {}, features: {}, users: {}\n", fscore::format_uuid(sb.uuid), features(sb), sb.nr_users);
  fmt::print("s_sequence {}, s_start {}, s_head {}, s_errno {}\n", sb.sequence, sb.start, sb.head, sb.errno_value);
  if (!scan.needs_recovery) {
    fmt::print("clean: nothing to recover\n");
    return 0;
  }
  fmt::print("\n{:>10} {:>8} {:>8} {:>6} {:>8} {:>7} {:>8} {:>9} {:>22}  {}\n", "tid", "start", "commit", "descr",
             "logged", "revoke", "revoked", "bad csum", "commit time", "replayed");
  for (const auto& t : scan.transactions) {
    const std::uint32_t bad = t.bad_descriptor_checksums + t.bad_block_checksums + (t.bad_commit_checksum ? 1u : 0u);
    fmt::print("{:>10} {:>8} {:>8} {:>6} {:>8} {:>7} {:>8} {:>9} {:>12}.{:09d}  {}\n", t.tid, t.first_log_block,
               t.commit_log_block ? std::to_string(*t.commit_log_block) : "-", t.descriptor_blocks, t.logged_blocks,
               t.revoke_blocks, t.revoked, bad, t.commit_seconds, t.commit_nanoseconds, t.replayed ? "yes" : "no");
  }
  fmt::print("\nend of the log at block {}: {}\n", scan.end_log_block, scan.end_reason);
  if (scan.error != 0)
    fmt::print("recovery fails (error {}) and replays nothing\n", scan.error);
  else
    fmt::print("recovery replays {} transactions ({} to {}) and restarts the log at {}\n", replayed, scan.start_tid,
               scan.end_tid - 1, scan.end_tid + 1);
  return 0;
}

std::uint32_t default_now() {
  if (const char* t = std::getenv("E2FSCK_TIME"); t != nullptr && *t != '\0') {
    char* end = nullptr;
    const unsigned long long v = std::strtoull(t, &end, 0);
    if (end != nullptr && *end == '\0') return static_cast<std::uint32_t>(v);
  }
  return static_cast<std::uint32_t>(std::time(nullptr));
}

int replay(const std::string& path, const std::optional<std::string>& journal_path, std::uint32_t now) {
  Opened o = open_images(path, journal_path, FileImage::Mode::read_write);
  fscore::ext4::ImageAccess fs{*o.image, *o.image};
  std::optional<fscore::ext4::ImageAccess> journal;
  if (o.journal) journal.emplace(fscore::ext4::ImageAccess{*o.journal, *o.journal});
  const auto r = fscore::ext4::replay_journal_like_e2fsck(fs, journal ? &*journal : nullptr, now);
  if (!r.needed) {
    fmt::print("{}: the journal is clean, nothing to replay\n", path);
    return 0;
  }
  o.image->sync();
  if (o.journal) o.journal->sync();
  std::uint64_t transactions = 0;
  for (const auto& t : r.scan.transactions) transactions += t.replayed;
  fmt::print("{}: replayed {} transactions ({} blocks written home, {} revoked, {} with a bad checksum); "
             "the journal restarts at transaction {}\n",
             path, transactions, r.result.replayed, r.result.revoke_hits, r.result.bad_checksums, r.new_sequence);
  if (r.scan.failed_commit)
    fmt::print("transaction {} was corrupt: replay stopped before it; the filesystem is marked with errors\n",
               *r.scan.failed_commit);
  if (r.result.error != 0)
    fmt::print("recovery failed (error {}: {}): the filesystem is marked not clean; run e2fsck\n", r.result.error,
               r.scan.end_reason);
  if (r.orphans != 0)
    fmt::print("orphan inodes are listed (from inode {}): e2fsck would release them now; run e2fsck\n", r.orphans);
  if (r.block_mapped_journal)
    fmt::print("note: the journal is block-mapped (ext3): s_kbytes_written may differ from e2fsck's\n");
  return 0;
}

int top(const std::string& socket, std::uint64_t interval, bool once) {
  catch_interrupts();
  do {
    const auto r = control_request(socket, "GET", "/journal?format=text");
    if (r.status != 200) throw std::runtime_error("the server answered " + std::to_string(r.status) + ": " + r.body);
    if (!once && isatty(STDOUT_FILENO)) std::fputs("\033[H\033[2J", stdout);
    std::fputs(r.body.c_str(), stdout);
    std::fflush(stdout);
    for (std::uint64_t i = 0; !once && !interrupted() && i < interval * 10; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
  } while (!once && !interrupted());
  return 0;
}

}  // namespace

CommandRun declare_journal(Command& app) {
  auto a = std::make_shared<JournalArgs>();
  app.describe(kJournalText);
  app.require_subcommands(1, 1);
  const auto optional = [](const std::string& s) { return s.empty() ? std::nullopt : std::optional<std::string>(s); };
  Command inspect_app = app.subcommand("inspect", "the log's transactions as recovery would find them");
  Command replay_app = app.subcommand("replay", "apply the log to the image as e2fsck does");
  Command top_app = app.subcommand("top", "a running server's live journal");
  for (Command sub : {inspect_app, replay_app}) {
    sub.add("IMAGE", a->operand, "the filesystem image, or a journal device alone");
    sub.add("--journal", a->journal, "the external journal device of IMAGE").value_name("IMAGE");
  }
  inspect_app.describe(kInspectText);
  inspect_app.flag("--json", a->json, "one JSON object");
  replay_app.describe(kReplayText);
  replay_app.count("--time", a->now, 0u, 0xFFFFFFFFu,
            "s_wtime to write, in seconds since 1970 (default: E2FSCK_TIME if set, else now)")
      .value_name("SECONDS")
      .on_given([a] { a->now_given = true; });
  top_app.describe(kTopText);
  top_app.add("CONTROL", a->operand, "the socket the server was given with control=PATH");
  top_app.count("--interval", a->interval, 1, 3600, "seconds between redraws (default 1)").value_name("SECONDS");
  top_app.flag("--once", a->once, "print once and exit");
  return [a, inspect_app, replay_app, optional] {
    if (a->operand.empty())
      throw UsageError(std::string("nvj journal ") + (inspect_app.parsed() ? "inspect: which IMAGE?"
                                                      : replay_app.parsed() ? "replay: which IMAGE?"
                                                                             : "top: which server? (its CONTROL socket)"));
    if (inspect_app.parsed()) return inspect(a->operand, optional(a->journal), a->json);
    if (replay_app.parsed()) return replay(a->operand, optional(a->journal), a->now_given ? a->now : default_now());
    return top(a->operand, a->interval, a->once);
  };
}

}  // namespace nvj::cli
