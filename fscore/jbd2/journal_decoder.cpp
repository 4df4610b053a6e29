// SPDX-License-Identifier: BSD-3-Clause
#include "fscore/jbd2/journal_decoder.h"

#include <algorithm>
#include <stdexcept>

#include "fscore/endian.h"

namespace fscore::jbd2 {

const char* to_string(Problem p) {
  switch (p) {
    case Problem::kChecksum: return "checksum";
    case Problem::kUnexpected: return "unexpected block";
    case Problem::kSkipped: return "skipped transactions";
    case Problem::kStalled: return "stalled";
    case Problem::kBadSuperblock: return "bad superblock";
    case Problem::kTooLarge: return "journal too large";
  }
  return "?";
}

namespace {

// Where a journal device's superblock is for a block size: block 1024/bs + 1.
bool superblock_offset_fits(std::uint64_t offset, std::uint32_t block_size) {
  return offset == 0 || offset == std::uint64_t{block_size} * (1024 / block_size + 1);
}

}  // namespace

JournalDecoder::JournalDecoder(const BlockSource& journal, DecoderEvents& events,
                               std::vector<std::uint64_t> superblock_offsets, const LoggedKindOracle* oracle)
    : journal_(journal), events_(events), superblock_offsets_(std::move(superblock_offsets)), oracle_(oracle) {
  for (std::uint64_t offset : superblock_offsets_) {
    if (offset + kSuperblockSize > journal_.size()) continue;
    std::uint8_t raw[kSuperblockSize];
    journal_.read(offset, raw);
    try {
      const JournalSuperblock sb = decode_journal_superblock(std::span<const std::uint8_t, kSuperblockSize>(raw));
      if (!superblock_offset_fits(offset, sb.block_size)) continue;
      superblock_offset_ = offset;
      set_format(sb);
      if (format_) {
        super_ = sb;
        tail_ = sb.start;
        expected_ = sb.sequence;
      }
      break;
    } catch (const std::runtime_error&) {
      // Not a journal (yet): the first valid superblock written sets it up.
    }
  }
}

void JournalDecoder::set_format(const JournalSuperblock& sb) {
  if (sb.maxlen > kMaxBlocks) {
    report(Problem::kTooLarge, 0,
           std::to_string(sb.maxlen) + " blocks; the decoder follows at most " + std::to_string(kMaxBlocks));
    format_.reset();
    return;
  }
  const LogFormat next = LogFormat::from(sb);
  const bool same_log = format_ && format_->maxlen == next.maxlen && format_->block_size == next.block_size &&
                        format_->first == next.first && format_->last == next.last;
  format_ = next;
  if (!same_log) {
    arrived_.assign(sb.maxlen, kNever);
    completed_.assign(sb.maxlen, kNever);
    waiting_ = 0;
    synced_ = false;
    pending_.clear();
    open_ = Open{};
  }
}

void JournalDecoder::write(const LogWrite& w) {
  if (w.bytes.empty()) return;
  last_time_ = std::max(last_time_, w.completed);
  if (w.fua) add_mark(w.arrived, true);
  if (!format_) {
    try_superblock(w, w.completed);
    return;
  }
  current_ = &w;
  const std::uint32_t bs = format_->block_size;
  const std::uint64_t first = w.offset / bs;
  const std::uint64_t last = (w.offset + w.bytes.size() - 1) / bs;
  const std::uint64_t sb_block = superblock_offset_ / bs;
  for (std::uint64_t b = first; b <= last && format_; ++b) {
    if (b == sb_block) {
      try_superblock(w, w.completed);
    } else if (b >= format_->last && b < format_->maxlen) {
      ++totals_.fast_commit_blocks;
      events_.on_fast_commit(static_cast<std::uint32_t>(b));
    } else if (b >= format_->first && b < format_->last) {
      const auto block = static_cast<std::uint32_t>(b);
      note_written(block, w.arrived, w.completed);
      // Lost in a log in use: take it up again at the next descriptor or
      // revoke block. A clean journal's log begins with a superblock update.
      if (!synced_ && tail_ != 0) look_for_log(block, block_bytes(block));
    }
  }
  if (format_) advance();
  current_ = nullptr;
}

void JournalDecoder::flush(Nanos at) { add_mark(at, false); }

void JournalDecoder::add_mark(Nanos at, bool fua) {
  if (marks_.size() == kMaxMarks) marks_.pop_front();
  marks_.push_back(Mark{at, fua});
}

bool JournalDecoder::try_superblock(const LogWrite& w, Nanos at) {
  const std::uint64_t end = w.offset + w.bytes.size();
  for (std::uint64_t offset : superblock_offsets_) {
    if (format_ && offset != superblock_offset_) continue;
    if (end <= offset || w.offset >= offset + kSuperblockSize) continue;  // does not touch it
    if (offset + kSuperblockSize > journal_.size()) continue;
    std::uint8_t raw[kSuperblockSize];
    journal_.read(offset, raw);
    JournalSuperblock sb;
    try {
      sb = decode_journal_superblock(std::span<const std::uint8_t, kSuperblockSize>(raw));
    } catch (const std::runtime_error& e) {
      if (format_) report(Problem::kBadSuperblock, static_cast<std::uint32_t>(offset / format_->block_size), e.what());
      continue;
    }
    if (!superblock_offset_fits(offset, sb.block_size) || (format_ && sb.block_size != format_->block_size)) {
      if (format_) report(Problem::kBadSuperblock, 0, "block size " + std::to_string(sb.block_size) + " changed");
      continue;
    }
    superblock_offset_ = offset;
    superblock_written(sb, at);
    return true;
  }
  return false;
}

void JournalDecoder::superblock_written(const JournalSuperblock& sb, Nanos at) {
  set_format(sb);
  if (!format_) return;
  ++totals_.superblock_writes;
  const std::uint32_t before = tail_;
  super_ = sb;
  tail_ = sb.start;
  events_.on_superblock(SuperblockUpdate{sb.start, sb.sequence, sb.head, sb.errno_value, at});
  // A log begins (the first commit after a mount writes the superblock
  // first), or one we lost is found again: follow it from its start.
  if (sb.start != 0 && (!synced_ || before == 0 || tid_after(sb.sequence, expected_))) {
    sync_at(sb.start, sb.sequence);
    advance();
  }
  update_fill(at);
}

void JournalDecoder::note_written(std::uint32_t block, Nanos arrived, Nanos completed) {
  if (arrived_[block] == kNever) ++waiting_;
  arrived_[block] = arrived;
  completed_[block] = completed;
}

void JournalDecoder::look_for_log(std::uint32_t block, std::span<const std::uint8_t> bytes) {
  const auto h = read_block_header(bytes);
  if (h && (h->type == static_cast<std::uint32_t>(BlockType::kDescriptor) ||
            h->type == static_cast<std::uint32_t>(BlockType::kRevoke)))
    sync_at(block, h->sequence);
}

void JournalDecoder::sync_at(std::uint32_t block, std::uint32_t tid) {
  if (block < format_->first || block >= format_->last) return;
  synced_ = true;
  cursor_ = block;
  expected_ = tid;
  pending_.clear();
  pending_next_ = 0;
  open_ = Open{};
}

void JournalDecoder::lose_sync(Problem p, std::uint32_t block, std::string detail) {
  report(p, block, std::move(detail));
  synced_ = false;
  std::fill(arrived_.begin(), arrived_.end(), kNever);
  waiting_ = 0;
  pending_.clear();
  open_ = Open{};
}

void JournalDecoder::report(Problem p, std::uint32_t block, std::string detail) {
  ++totals_.problems;
  if (p == Problem::kChecksum) ++totals_.checksum_errors;
  events_.on_problem(ProblemReport{p, block, std::move(detail)});
}

std::span<const std::uint8_t> JournalDecoder::block_bytes(std::uint32_t block) {
  const std::uint64_t bs = format_->block_size;
  const std::uint64_t at = block * bs;
  if (current_ != nullptr && at >= current_->offset && at + bs <= current_->offset + current_->bytes.size())
    return current_->bytes.subspan(at - current_->offset, bs);
  scratch_.resize(bs);
  if (at + bs > journal_.size()) std::fill(scratch_.begin(), scratch_.end(), 0);
  else journal_.read(at, scratch_);
  return scratch_;
}

void JournalDecoder::advance() {
  const std::uint64_t log_len = format_->last - format_->first;
  while (synced_ && arrived_[cursor_] != kNever) {
    if (!step(cursor_, block_bytes(cursor_))) break;
  }
  if (waiting_ > log_len / 2) {
    lose_sync(Problem::kStalled, cursor_,
              "log block " + std::to_string(cursor_) + " was never written while " + std::to_string(waiting_) +
                  " blocks after it were");
  }
}

bool JournalDecoder::step(std::uint32_t block, std::span<const std::uint8_t> bytes) {
  if (pending_next_ < pending_.size()) {
    consume_logged(block, bytes);
    return true;
  }
  const auto h = read_block_header(bytes);
  if (!h) {
    lose_sync(Problem::kUnexpected, block,
              "log block " + std::to_string(block) + " has no jbd2 header where transaction " +
                  std::to_string(expected_) + " continues");
    return false;
  }
  if (h->sequence != expected_) {
    const bool starts = h->type == static_cast<std::uint32_t>(BlockType::kDescriptor) ||
                        h->type == static_cast<std::uint32_t>(BlockType::kRevoke);
    if (!starts || !tid_after(h->sequence, expected_) || open_.active) {
      lose_sync(Problem::kUnexpected, block,
                "log block " + std::to_string(block) + " belongs to transaction " + std::to_string(h->sequence) +
                    ", expected " + std::to_string(expected_));
      return false;
    }
    report(Problem::kSkipped, block,
           "transactions " + std::to_string(expected_) + " to " + std::to_string(h->sequence - 1) + " were not seen");
    expected_ = h->sequence;
  }
  decode_header_block(block, bytes, *h);
  return synced_;
}

void JournalDecoder::open_transaction(std::uint32_t block) {
  if (open_.active) return;
  open_.active = true;
  open_.tx = Transaction{};
  open_.tx.tid = expected_;
  open_.tx.first_log_block = block;
  open_.tx.first_write = arrived_[block];
}

void JournalDecoder::take_block(std::uint32_t block) {
  ++open_.tx.log_blocks;
  open_.tx.first_write = std::min(open_.tx.first_write, arrived_[block]);
  arrived_[block] = kNever;
  --waiting_;
  cursor_ = next_block(block);
}

void JournalDecoder::decode_header_block(std::uint32_t block, std::span<const std::uint8_t> bytes,
                                         const BlockHeader& h) {
  switch (static_cast<BlockType>(h.type)) {
    case BlockType::kDescriptor: {
      open_transaction(block);
      ++open_.tx.descriptor_blocks;
      ++totals_.descriptor_blocks;
      if (!block_tail_checksum_ok(*format_, bytes)) {
        ++open_.tx.checksum_errors;
        report(Problem::kChecksum, block, "descriptor block of transaction " + std::to_string(h.sequence));
      }
      pending_.clear();
      pending_next_ = 0;
      parse_descriptor_tags(*format_, bytes, pending_);
      events_.on_descriptor(h.sequence, block, pending_);
      take_block(block);
      return;
    }
    case BlockType::kRevoke: {
      open_transaction(block);
      ++open_.tx.revoke_blocks;
      ++totals_.revoke_blocks;
      if (!block_tail_checksum_ok(*format_, bytes)) {
        ++open_.tx.checksum_errors;
        report(Problem::kChecksum, block, "revoke block of transaction " + std::to_string(h.sequence));
      }
      revoked_.clear();
      parse_revoke_records(*format_, bytes, revoked_);
      open_.tx.revoked += static_cast<std::uint32_t>(revoked_.size());
      totals_.revoked += revoked_.size();
      events_.on_revoke(h.sequence, block, revoked_);
      take_block(block);
      return;
    }
    case BlockType::kCommit:
      finish_commit(block, bytes);
      return;
    default:
      lose_sync(Problem::kUnexpected, block,
                "log block " + std::to_string(block) + " has block type " + std::to_string(h.type));
  }
}

void JournalDecoder::consume_logged(std::uint32_t block, std::span<const std::uint8_t> bytes) {
  const Tag& tag = pending_[pending_next_++];
  LoggedBlock logged;
  logged.tid = expected_;
  logged.log_block = block;
  logged.target = tag.target;
  logged.escaped = tag.escaped();
  logged.checksum_ok = tag_checksum_ok(*format_, tag, expected_, bytes);
  logged.content = bytes;
  if (oracle_ != nullptr) {
    std::span<const std::uint8_t> home = bytes;
    if (logged.escaped) {
      restored_.assign(bytes.begin(), bytes.end());
      store_be<std::uint32_t>(restored_.data(), kMagic);
      home = restored_;
    }
    logged.kind = oracle_->classify(tag.target, home);
  }
  Transaction& tx = open_.tx;
  ++tx.logged_blocks;
  ++totals_.logged_blocks;
  if (logged.kind == LoggedKind::kMetadata) ++tx.metadata_blocks, ++totals_.metadata_blocks;
  if (logged.kind == LoggedKind::kData) ++tx.data_blocks, ++totals_.data_blocks;
  if (logged.escaped) ++tx.escaped_blocks, ++totals_.escaped_blocks;
  if (!logged.checksum_ok) {
    ++tx.checksum_errors;
    report(Problem::kChecksum, block,
           "block logged for " + std::to_string(tag.target) + " in transaction " + std::to_string(expected_));
  }
  events_.on_logged_block(logged);
  take_block(block);
}

void JournalDecoder::finish_commit(std::uint32_t block, std::span<const std::uint8_t> bytes) {
  open_transaction(block);
  Transaction& tx = open_.tx;
  const CommitBlock c = parse_commit_block(bytes);
  tx.commit_log_block = block;
  tx.commit_seconds = c.seconds;
  tx.commit_nanoseconds = c.nanoseconds;
  tx.commit_arrived = arrived_[block];
  tx.commit_completed = completed_[block];
  if (!commit_checksum_ok(*format_, bytes)) {
    ++tx.checksum_errors;
    report(Problem::kChecksum, block, "commit block of transaction " + std::to_string(tx.tid));
  }
  take_block(block);
  // Marks before this transaction began cannot fall in a later one's either.
  while (!marks_.empty() && marks_.front().at < tx.first_write) marks_.pop_front();
  for (const Mark& m : marks_) {
    if (m.at > tx.commit_completed) break;
    ++(m.fua ? tx.fua_writes : tx.flushes);
  }
  ++totals_.transactions;
  ++totals_.commit_blocks;
  totals_.log_blocks += tx.log_blocks;
  totals_.log_bytes += tx.bytes(format_->block_size);
  events_.on_commit(tx);
  const Nanos done = tx.commit_completed;
  ++expected_;
  open_ = Open{};
  update_fill(done);
}

double JournalDecoder::fill() const {
  if (!format_ || tail_ == 0 || !synced_) return 0.0;
  const std::uint32_t len = format_->last - format_->first;
  if (tail_ < format_->first || tail_ >= format_->last) return 0.0;
  const std::uint32_t used = (cursor_ + len - tail_) % len;
  return static_cast<double>(used) / len;
}

void JournalDecoder::update_fill(Nanos at) {
  const bool full = fill() >= kFullFill;
  if (full && full_since_ == kNever) {
    full_since_ = at;
  } else if (!full && full_since_ != kNever) {
    const Nanos stretch = std::max<Nanos>(0, at - full_since_);
    totals_.full_time += stretch;
    totals_.longest_full = std::max(totals_.longest_full, stretch);
    full_since_ = kNever;
  }
}

DecoderTotals JournalDecoder::totals(Nanos now) const {
  DecoderTotals t = totals_;
  if (full_since_ != kNever) {
    const Nanos stretch = std::max<Nanos>(0, now - full_since_);
    t.full_time += stretch;
    t.longest_full = std::max(t.longest_full, stretch);
  }
  return t;
}

}  // namespace fscore::jbd2
