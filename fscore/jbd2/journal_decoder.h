// SPDX-License-Identifier: BSD-3-Clause
// JournalDecoder: follows a jbd2 journal from the writes a device receives,
// in the order it receives them, and reports what they mean: superblock
// updates, descriptor blocks and the blocks they log, revoke blocks, commit
// blocks (one finished transaction each) and fast-commit blocks.
//
// It walks the log the way recovery does (from the log's start, expecting
// one transaction id after another, wrapping at the end of the log), but
// driven by the writes: a cursor moves over log blocks as they are written,
// so blocks that arrive out of order (several requests in flight, a page
// cache in between) are decoded in log order once the gap is filled. A block
// the cursor needs and has not seen written stops it until it is. Garbage,
// stale blocks and checksum mismatches are reported and the decoder finds
// the log again at the next superblock update or, in a log in use, at the
// next descriptor or revoke block;
// nothing it keeps grows with the input: per log block a time stamp, plus
// bounded lists.
//
// Pure: times come in with the writes, earlier blocks are read back through
// a BlockSource over the journal (log block N at byte N * block size).
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "fscore/block_io.h"
#include "fscore/jbd2/journal_superblock.h"
#include "fscore/jbd2/log_blocks.h"

namespace fscore::jbd2 {

using Nanos = std::int64_t;

// One write to the journal, in journal bytes (log block N is at N * block
// size; an internal journal's caller maps disk offsets to that).
struct LogWrite {
  std::uint64_t offset = 0;
  std::span<const std::uint8_t> bytes;
  bool fua = false;
  Nanos arrived = 0;    // when the device received it
  Nanos completed = 0;  // when the device acknowledged it
};

// What a logged block is, where the caller can tell from its home and content.
enum class LoggedKind : std::uint8_t { kUnknown, kMetadata, kData };

class LoggedKindOracle {
 public:
  virtual ~LoggedKindOracle() = default;
  // `content` is the block as it will be written home (escape undone).
  virtual LoggedKind classify(std::uint64_t target, std::span<const std::uint8_t> content) const = 0;
};

struct SuperblockUpdate {
  std::uint32_t start = 0;     // 0: the journal is clean (unmounted or emptied)
  std::uint32_t sequence = 0;  // the oldest transaction still needed
  std::uint32_t head = 0;      // s_head (0 unless the kernel records it)
  std::int32_t errno_value = 0;
  Nanos at = 0;
};

struct LoggedBlock {
  std::uint32_t tid = 0;
  std::uint32_t log_block = 0;
  std::uint64_t target = 0;
  bool escaped = false;
  bool checksum_ok = true;
  LoggedKind kind = LoggedKind::kUnknown;
  std::span<const std::uint8_t> content;  // as logged (escaped blocks begin with zeroes)
};

// One committed transaction.
struct Transaction {
  std::uint32_t tid = 0;
  std::uint32_t first_log_block = 0;  // where it starts in the log
  std::uint32_t commit_log_block = 0;
  std::uint32_t log_blocks = 0;  // every block it took: descriptors, logged, revoke, commit
  std::uint32_t descriptor_blocks = 0;
  std::uint32_t logged_blocks = 0;
  std::uint32_t metadata_blocks = 0;
  std::uint32_t data_blocks = 0;
  std::uint32_t escaped_blocks = 0;
  std::uint32_t revoke_blocks = 0;
  std::uint32_t revoked = 0;  // revoke records
  std::uint32_t checksum_errors = 0;
  Nanos first_write = 0;       // arrival of its earliest log write
  Nanos commit_arrived = 0;    // arrival of its commit block
  Nanos commit_completed = 0;  // acknowledgement of its commit block
  std::uint64_t commit_seconds = 0;  // the kernel's time stamp in the commit block
  std::uint32_t commit_nanoseconds = 0;
  std::uint32_t flushes = 0;     // flushes (either device) from first write to commit
  std::uint32_t fua_writes = 0;  // FUA writes to the journal in that time
  Nanos duration() const { return commit_completed - first_write; }
  std::uint64_t bytes(std::uint32_t block_size) const { return std::uint64_t{log_blocks} * block_size; }
};

enum class Problem : std::uint8_t {
  kChecksum,       // a descriptor, revoke, commit or logged block does not match its checksum
  kUnexpected,     // a written block where the log continues is not the expected one
  kSkipped,        // the log continues with a later transaction than expected
  kStalled,        // the block the log needs was not written while much else was
  kBadSuperblock,  // a write to the superblock that does not decode
  kTooLarge,       // the journal is larger than the decoder follows
};
const char* to_string(Problem p);

struct ProblemReport {
  Problem problem;
  std::uint32_t log_block = 0;
  std::string detail;
};

class DecoderEvents {
 public:
  virtual ~DecoderEvents() = default;
  virtual void on_superblock(const SuperblockUpdate&) {}
  virtual void on_descriptor(std::uint32_t /*tid*/, std::uint32_t /*log_block*/, std::span<const Tag>) {}
  virtual void on_logged_block(const LoggedBlock&) {}
  virtual void on_revoke(std::uint32_t /*tid*/, std::uint32_t /*log_block*/, std::span<const std::uint64_t>) {}
  virtual void on_commit(const Transaction&) {}
  virtual void on_fast_commit(std::uint32_t /*log_block*/) {}
  virtual void on_problem(const ProblemReport&) {}
};

struct DecoderTotals {
  std::uint64_t transactions = 0;
  std::uint64_t descriptor_blocks = 0;
  std::uint64_t logged_blocks = 0;
  std::uint64_t metadata_blocks = 0;
  std::uint64_t data_blocks = 0;
  std::uint64_t escaped_blocks = 0;
  std::uint64_t revoke_blocks = 0;
  std::uint64_t revoked = 0;
  std::uint64_t commit_blocks = 0;
  std::uint64_t fast_commit_blocks = 0;
  std::uint64_t superblock_writes = 0;
  std::uint64_t checksum_errors = 0;
  std::uint64_t problems = 0;
  std::uint64_t log_blocks = 0;  // blocks of the transactions decoded (the kernel's "logged blocks")
  std::uint64_t log_bytes = 0;
  Nanos full_time = 0;          // time the log was at least kFullFill full
  Nanos longest_full = 0;       // the longest such stretch
};

class JournalDecoder {
 public:
  // Above this fill the kernel makes new handles wait for a checkpoint: jbd2
  // wants a quarter of the log free (j_max_transaction_buffers).
  static constexpr double kFullFill = 0.75;
  // Journals with more log blocks than this are not followed (kTooLarge).
  static constexpr std::uint32_t kMaxBlocks = 1u << 23;

  // `journal` reads what was written before (the store the writes land in).
  // `superblock_offsets`: where the journal superblock may be, in bytes (0
  // for an internal journal; 1024/bs + 1 blocks in for a journal device,
  // which for an unknown block size means 2048 or 4096). The superblock in
  // `journal` now, if any, sets the format; else the first valid superblock
  // written does.
  JournalDecoder(const BlockSource& journal, DecoderEvents& events, std::vector<std::uint64_t> superblock_offsets,
                 const LoggedKindOracle* oracle = nullptr);

  // The bytes of `w` must already be in `journal`.
  void write(const LogWrite& w);
  // A flush of the journal or of the filesystem device.
  void flush(Nanos at);

  bool has_format() const { return format_.has_value(); }
  const LogFormat* format() const { return format_ ? &*format_ : nullptr; }
  std::optional<JournalSuperblock> superblock() const { return super_; }
  bool synchronized() const { return synced_; }
  std::uint32_t head() const { return cursor_; }      // next log block the log continues at
  std::uint32_t tail() const { return tail_; }        // s_start as last written (0: clean)
  std::uint32_t next_tid() const { return expected_; }
  double fill() const;
  // Totals, with the time the log has been full counted up to `now`.
  DecoderTotals totals(Nanos now) const;

 private:
  struct Open {  // the transaction being assembled at the cursor
    bool active = false;
    Transaction tx;
  };
  struct Mark {
    Nanos at;
    bool fua;  // a FUA write, else a flush
  };
  static constexpr Nanos kNever = INT64_MIN;
  static constexpr std::size_t kMaxMarks = 4096;
  void add_mark(Nanos at, bool fua);

  void set_format(const JournalSuperblock& sb);
  bool try_superblock(const LogWrite& w, Nanos at);
  void superblock_written(const JournalSuperblock& sb, Nanos at);
  void note_written(std::uint32_t block, Nanos arrived, Nanos completed);
  void look_for_log(std::uint32_t block, std::span<const std::uint8_t> bytes);
  void advance();
  bool step(std::uint32_t block, std::span<const std::uint8_t> bytes);
  void decode_header_block(std::uint32_t block, std::span<const std::uint8_t> bytes, const BlockHeader& h);
  void consume_logged(std::uint32_t block, std::span<const std::uint8_t> bytes);
  void finish_commit(std::uint32_t block, std::span<const std::uint8_t> bytes);
  void take_block(std::uint32_t block);
  void open_transaction(std::uint32_t block);
  void lose_sync(Problem p, std::uint32_t block, std::string detail);
  void sync_at(std::uint32_t block, std::uint32_t tid);
  void report(Problem p, std::uint32_t block, std::string detail);
  void update_fill(Nanos at);
  std::span<const std::uint8_t> block_bytes(std::uint32_t block);
  std::uint32_t next_block(std::uint32_t b) const { return b + 1 >= format_->last ? format_->first : b + 1; }

  const BlockSource& journal_;
  DecoderEvents& events_;
  const std::vector<std::uint64_t> superblock_offsets_;
  const LoggedKindOracle* const oracle_;

  std::optional<LogFormat> format_;
  std::optional<JournalSuperblock> super_;
  std::uint64_t superblock_offset_ = 0;
  std::vector<Nanos> arrived_;      // per log block: when written and not yet decoded, else kNever
  std::vector<Nanos> completed_;
  std::uint64_t waiting_ = 0;       // blocks written and not decoded yet
  bool synced_ = false;
  std::uint32_t cursor_ = 0;
  std::uint32_t expected_ = 0;
  std::uint32_t tail_ = 0;
  std::vector<Tag> pending_;        // tags of the current descriptor still to consume
  std::size_t pending_next_ = 0;
  Open open_;
  std::deque<Mark> marks_;          // recent flushes and FUA writes, oldest first
  // The write being handled, so its blocks need not be read back.
  const LogWrite* current_ = nullptr;
  std::vector<std::uint8_t> scratch_;
  std::vector<std::uint8_t> restored_;
  std::vector<std::uint64_t> revoked_;
  DecoderTotals totals_;
  Nanos full_since_ = kNever;
  Nanos last_time_ = 0;
};

}  // namespace fscore::jbd2
