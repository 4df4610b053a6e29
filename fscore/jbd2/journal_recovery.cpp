// SPDX-License-Identifier: BSD-3-Clause
#include "fscore/jbd2/journal_recovery.h"

#include <stdexcept>
#include <unordered_map>

#include "fscore/endian.h"
#include "fscore/jbd2/log_blocks.h"

namespace fscore::jbd2 {
namespace {

enum class Pass { kScan, kRevoke, kReplay };

constexpr int kErrInvalid = 22;  // EINVAL: a revoke block's count is larger than the block

bool tid_geq(std::uint32_t a, std::uint32_t b) { return static_cast<std::int32_t>(a - b) >= 0; }

// One walk over the log, as recovery.c's do_one_pass.
class Walk {
 public:
  Walk(const JournalLog& log, const JournalSuperblock& sb, RecoveryTrace* trace, const RecoveryRules& rules = {})
      : log_(log), sb_(sb), f_(LogFormat::from(sb)), trace_(trace), rules_(rules) {
    block_.resize(f_.block_size);
    logged_.resize(f_.block_size);
  }

  // Returns the pass's error (0 when it succeeded).
  int run(Pass pass, JournalScan& scan, ReplayResult* replay, BlockSink* fs, std::uint64_t fs_blocks) {
    std::uint32_t next_id = sb_.sequence;
    std::uint64_t next = sb_.start;
    if (pass == Pass::kScan) scan.start_tid = next_id;
    std::uint32_t crc32_sum = ~0u;
    bool need_check_commit_time = false;
    std::uint64_t last_commit_time = 0;
    bool block_error = false;
    int success = 0;
    // A log cannot be longer than the journal; a ring of blocks that all
    // claim the expected transaction would otherwise never end.
    const std::uint64_t limit = 2 * std::uint64_t{f_.maxlen} + 2;
    std::uint64_t visited = 0;

    for (;;) {
      if (pass != Pass::kScan && tid_geq(next_id, scan.end_tid)) break;
      if (++visited > limit) {
        scan.end_reason = "the log does not end";
        return kErrCorrupted;
      }
      const std::uint64_t here = next;
      if (int err = read(here, block_); err != 0) {
        scan.end_reason = "log block " + std::to_string(here) + " cannot be read";
        return err;
      }
      next = wrap(next + 1);
      const auto h = read_block_header(block_);
      if (!h) {
        if (pass == Pass::kScan) end(scan, here, "no jbd2 header at log block " + std::to_string(here));
        break;
      }
      if (h->sequence != next_id) {
        if (pass == Pass::kScan)
          end(scan, here, "log block " + std::to_string(here) + " belongs to transaction " + std::to_string(h->sequence));
        break;
      }
      ScannedTransaction* tx = pass == Pass::kScan ? &transaction(scan, next_id, here) : nullptr;

      switch (static_cast<BlockType>(h->type)) {
        case BlockType::kDescriptor: {
          const bool csum_ok = block_tail_checksum_ok(f_, block_);
          if (!csum_ok) {
            if (pass != Pass::kScan) return kErrBadCrc;
            need_check_commit_time = true;
            ++tx->bad_descriptor_checksums;
          }
          tags_.clear();
          parse_descriptor_tags(f_, block_, tags_);
          if (pass == Pass::kScan) {
            ++tx->descriptor_blocks;
            tx->logged_blocks += static_cast<std::uint32_t>(tags_.size());
            count_bad_tags(*tx, next, next_id);
          }
          if (pass != Pass::kReplay) {
            if (pass == Pass::kScan && f_.csum_v1 && !need_check_commit_time && scan.end_tid == 0) {
              crc32_sum = crc32_be(crc32_sum, block_);
              bool failed = false;
              for (std::size_t i = 0; i < tags_.size() && !failed; ++i) {
                const std::uint64_t io = next;
                next = wrap(next + 1);
                if (read(io, logged_) != 0) failed = true;
                else crc32_sum = crc32_be(crc32_sum, logged_);
              }
              continue;
            }
            next = wrap(next + tags_.size());
            continue;
          }
          for (const Tag& tag : tags_) {
            const std::uint64_t io = next;
            next = wrap(next + 1);
            if (int err = read(io, logged_); err != 0) {
              success = err;
              continue;
            }
            if (revoked(tag.target, next_id)) {
              ++replay->revoke_hits;
              continue;
            }
            if (!tag_checksum_ok(f_, tag, h->sequence, logged_)) {
              success = kErrBadCrc;
              block_error = true;
              ++replay->bad_checksums;
              continue;
            }
            if (tag.target >= fs_blocks) {
              success = kErrCorrupted;
              continue;
            }
            if (tag.escaped()) store_be<std::uint32_t>(logged_.data(), kMagic);
            fs->write(tag.target * f_.block_size, logged_);
            if (trace_ != nullptr) trace_->wrote(tag.target);
            replay->written.push_back(tag.target);
            replay->sources.emplace_back(static_cast<std::uint32_t>(io), tag.escaped());
            ++replay->replayed;
          }
          continue;
        }
        case BlockType::kCommit: {
          const std::uint64_t commit_time = load_be<std::uint64_t>(block_.data() + commit_at::kSec);
          if (pass == Pass::kScan) {
            const CommitBlock c = parse_commit_block(block_);
            tx->commit_log_block = static_cast<std::uint32_t>(here);
            tx->commit_seconds = c.seconds;
            tx->commit_nanoseconds = c.nanoseconds;
          }
          if (need_check_commit_time) {
            if (commit_time >= last_commit_time) {
              scan.end_reason = "transaction " + std::to_string(next_id) + " has a bad descriptor or revoke checksum";
              return kErrBadCrc;
            }
            end(scan, here, "a stale transaction " + std::to_string(next_id) + " (bad checksum, older commit time)");
            return finish(pass, scan, next_id, success, block_error);
          }
          bool checksum_error = false;
          if (pass == Pass::kScan && f_.csum_v1) {
            const std::uint32_t found = load_be<std::uint32_t>(block_.data() + commit_at::kChecksum);
            if (scan.end_tid != 0) {
              scan.failed_commit = scan.end_tid;
              continue;
            }
            const bool matches = crc32_sum == found && block_[12] == kCrc32Checksum && block_[13] == 4;
            const bool unused = block_[12] == 0 && block_[13] == 0 && found == 0;
            if (!matches && !unused) checksum_error = true;
            crc32_sum = ~0u;
          }
          if (pass == Pass::kScan && !checksum_error && !commit_checksum_ok(f_, block_)) {
            if (rules_.partial_commit_blocks && commit_header_checksum_ok(f_, block_)) tx->partial_commit = true;
            else checksum_error = true;
          }
          if (checksum_error) {
            tx->bad_commit_checksum = true;
            if (commit_time < last_commit_time) {
              end(scan, here, "a stale transaction " + std::to_string(next_id) + " (bad checksum, older commit time)");
              return finish(pass, scan, next_id, success, block_error);
            }
            scan.end_tid = next_id;
            if (!f_.async_commit) {
              scan.failed_commit = next_id;
              end(scan, here, "transaction " + std::to_string(next_id) + " has a bad commit checksum");
              continue;
            }
          }
          if (pass == Pass::kScan) last_commit_time = commit_time;
          ++next_id;
          continue;
        }
        case BlockType::kRevoke: {
          if (pass == Pass::kScan) {
            ++tx->revoke_blocks;
            revoked_.clear();
            parse_revoke_records(f_, block_, revoked_);
            tx->revoked += static_cast<std::uint32_t>(revoked_.size());
            if (!block_tail_checksum_ok(f_, block_)) {
              need_check_commit_time = true;
              ++tx->bad_descriptor_checksums;
            }
          }
          if (pass != Pass::kRevoke) continue;
          if (int err = scan_revoke(next_id, *replay); err != 0) return err;
          continue;
        }
        default:
          if (pass == Pass::kScan)
            end(scan, here, "log block " + std::to_string(here) + " has block type " + std::to_string(h->type));
          return finish(pass, scan, next_id, success, block_error);
      }
    }
    return finish(pass, scan, next_id, success, block_error);
  }

 private:
  std::uint64_t wrap(std::uint64_t b) const { return b >= f_.last ? b - (f_.last - f_.first) : b; }

  // Reads as recovery's jread() does (and tells the trace).
  int read(std::uint64_t log_block, std::vector<std::uint8_t>& out) const {
    if (log_block >= f_.maxlen) return kErrCorrupted;
    if (trace_ != nullptr) trace_->read(static_cast<std::uint32_t>(log_block));
    return peek(log_block, out);
  }
  // A read recovery does not do (the inspector's own checks).
  int peek(std::uint64_t log_block, std::vector<std::uint8_t>& out) const {
    if (log_block >= f_.maxlen) return kErrCorrupted;
    try {
      log_.read(static_cast<std::uint32_t>(log_block), out);
    } catch (const std::runtime_error&) {
      return kErrCorrupted;
    }
    return 0;
  }

  static void end(JournalScan& scan, std::uint64_t block, std::string reason) {
    scan.end_log_block = static_cast<std::uint32_t>(block);
    if (scan.end_reason.empty()) scan.end_reason = std::move(reason);
  }

  static ScannedTransaction& transaction(JournalScan& scan, std::uint32_t tid, std::uint64_t block) {
    if (scan.transactions.empty() || scan.transactions.back().tid != tid) {
      scan.transactions.emplace_back();
      scan.transactions.back().tid = tid;
      scan.transactions.back().first_log_block = static_cast<std::uint32_t>(block);
    }
    return scan.transactions.back();
  }

  // For the inspector: the logged blocks that would fail their checksum.
  // At most a few passes over the journal in all: a log that loops without
  // a commit must not cost visits x tags reads.
  void count_bad_tags(ScannedTransaction& tx, std::uint64_t first, std::uint32_t tid) {
    if (!f_.csum_v2_or_v3()) return;
    std::uint64_t b = first;
    for (const Tag& tag : tags_) {
      if (peeks_ >= 4 * std::uint64_t{f_.maxlen}) return;
      ++peeks_;
      if (peek(b, logged_) != 0 || !tag_checksum_ok(f_, tag, tid, logged_)) ++tx.bad_block_checksums;
      b = wrap(b + 1);
    }
  }

  bool revoked(std::uint64_t block, std::uint32_t tid) const {
    const auto it = revokes_.find(block);
    return it != revokes_.end() && !tid_after(tid, it->second);
  }

  int scan_revoke(std::uint32_t tid, ReplayResult& replay) {
    const std::uint32_t count = load_be<std::uint32_t>(block_.data() + 12);
    if (count > f_.block_size - f_.tail_bytes()) return kErrInvalid;
    revoked_.clear();
    parse_revoke_records(f_, block_, revoked_);
    for (std::uint64_t b : revoked_) {
      auto [it, added] = revokes_.try_emplace(b, tid);
      if (!added && tid_after(tid, it->second)) it->second = tid;
      ++replay.revokes;
    }
    return 0;
  }

  static int finish(Pass pass, JournalScan& scan, std::uint32_t next_id, int success, bool block_error) {
    if (pass == Pass::kScan) {
      if (scan.end_tid == 0) scan.end_tid = next_id;
    } else if (scan.end_tid != next_id && success == 0) {
      success = kErrIo;
    }
    if (block_error && success == 0) success = kErrIo;
    return success;
  }

  const JournalLog& log_;
  const JournalSuperblock& sb_;
  LogFormat f_;
  RecoveryTrace* trace_;
  RecoveryRules rules_;
  std::vector<std::uint8_t> block_, logged_;
  std::vector<Tag> tags_;
  std::vector<std::uint64_t> revoked_;
  std::unordered_map<std::uint64_t, std::uint32_t> revokes_;  // block -> latest revoking tid
  std::uint64_t peeks_ = 0;
};

}  // namespace

RecoveryRules recovery_rules_of(const std::string& kernel_release) {
  unsigned major = 0, minor = 0;
  std::size_t at = 0;
  const auto number = [&](unsigned& into) {
    const std::size_t from = at;
    while (at < kernel_release.size() && kernel_release[at] >= '0' && kernel_release[at] <= '9' && at - from < 6)
      into = into * 10 + static_cast<unsigned>(kernel_release[at++] - '0');
    return at > from;
  };
  RecoveryRules rules;
  if (!number(major) || at >= kernel_release.size() || kernel_release[at++] != '.' || !number(minor)) return rules;
  rules.partial_commit_blocks = major > 6 || (major == 6 && minor >= 11);
  return rules;
}

JournalScan scan_journal(const JournalLog& log, const JournalSuperblock& sb, RecoveryTrace* trace,
                         const RecoveryRules& rules) {
  if ((sb.feature_incompat & feature::kIncompatFastCommit) != 0)
    throw std::invalid_argument("the journal has fast commits, which are replayed with ext4's own code: not supported");
  JournalScan scan;
  scan.needs_recovery = sb.start != 0;
  scan.start_tid = sb.sequence;
  scan.end_tid = sb.sequence;
  if (!scan.needs_recovery) {
    scan.end_reason = "the journal is clean";
    return scan;
  }
  scan.end_tid = 0;
  Walk walk(log, sb, trace, rules);
  scan.error = walk.run(Pass::kScan, scan, nullptr, nullptr, 0);
  const std::uint32_t end = scan.end_tid;
  for (ScannedTransaction& tx : scan.transactions)
    tx.replayed = scan.error == 0 && tid_geq(tx.tid, scan.start_tid) && !tid_geq(tx.tid, end) && tx.commit_log_block;
  return scan;
}

ReplayResult replay_journal(const JournalLog& log, const JournalSuperblock& sb, const JournalScan& scan,
                            BlockSink& fs, std::uint64_t fs_blocks, RecoveryTrace* trace) {
  ReplayResult result;
  if (!scan.needs_recovery) {
    result.next_tid = sb.sequence + 1;
    return result;
  }
  result.next_tid = scan.end_tid + 1;
  if (scan.error != 0) {
    result.error = scan.error;
    return result;
  }
  Walk walk(log, sb, trace);
  JournalScan copy = scan;
  result.error = walk.run(Pass::kRevoke, copy, &result, &fs, fs_blocks);
  if (result.error == 0) result.error = walk.run(Pass::kReplay, copy, &result, &fs, fs_blocks);
  return result;
}

}  // namespace fscore::jbd2
