// SPDX-License-Identifier: BSD-3-Clause
#include "fscore/xfs/log_follower.h"

#include <algorithm>

#include "fscore/endian.h"

namespace fscore::xfs {

namespace {

std::string lsn_text(const Lsn& lsn) { return to_string(lsn); }

}  // namespace

LogFollower::LogFollower(const BlockSource& log, std::uint64_t log_blocks, FollowerEvents& events)
    : log_(log), log_blocks_(std::min(log_blocks, log.size() / kBasicBlock)), events_(events) {}

void LogFollower::set_log_blocks(std::uint64_t log_blocks) {
  log_blocks_ = std::min(log_blocks, log_.size() / kBasicBlock);
}

void LogFollower::write(const LogWrite& w) {
  ++totals_.log_writes;
  totals_.log_bytes += w.bytes.size();
  const std::uint64_t first = w.offset / kBasicBlock;
  if (w.offset % kBasicBlock != 0 || first >= log_blocks_) return;  // the kernel writes whole basic blocks
  const std::uint64_t blocks = std::min<std::uint64_t>(w.bytes.size() / kBasicBlock, log_blocks_ - first);
  // Records opened before: this write may carry more of their blocks.
  for (std::size_t i = 0; i < open_.size();) {
    Open& o = open_[i];
    if (!cover(o, first, blocks)) {
      ++i;
      continue;
    }
    ++o.record.writes;
    o.record.all_fua = o.record.all_fua && w.fua;
    o.record.first_write = std::min(o.record.first_write, w.arrived);
    o.record.written = std::max(o.record.written, w.completed);
    if (o.missing != 0) {
      ++i;
      continue;
    }
    FollowedRecord done = o.record;
    open_.erase(open_.begin() + static_cast<std::ptrdiff_t>(i));
    finish(done, w, first, blocks);
  }
  find_headers(w, first, blocks);
}

void LogFollower::find_headers(const LogWrite& w, std::uint64_t first, std::uint64_t blocks) {
  for (std::uint64_t i = 0; i < blocks; ++i) {
    const std::uint8_t* p = w.bytes.data() + i * kBasicBlock;
    if (load_be<std::uint32_t>(p) != kLogMagic) continue;  // data blocks start with a cycle, never the magic
    const auto h = parse_record_header(std::span(p, kBasicBlock));
    if (!h || h->lsn.block != first + i) continue;  // not a header where it lies
    const std::uint64_t n = std::uint64_t{header_blocks(*h)} + data_blocks(*h);
    if (n > log_blocks_) continue;
    open_record(*h, w, first, blocks);
    i += std::min<std::uint64_t>(n, blocks - i) - 1;
  }
}

void LogFollower::open_record(const LogRecordHeader& h, const LogWrite& w, std::uint64_t first,
                              std::uint64_t blocks) {
  // A record still open where this header lies was never written whole.
  for (std::size_t i = 0; i < open_.size();) {
    const Open& o = open_[i];
    const std::uint64_t from_start =
        (h.lsn.block + log_blocks_ - o.record.header.lsn.block) % log_blocks_;
    if (from_start < o.record.blocks) {
      problem("the record at " + lsn_text(o.record.header.lsn) + " was never written whole: the record at " +
              lsn_text(h.lsn) + " was written over it");
      open_.erase(open_.begin() + static_cast<std::ptrdiff_t>(i));
    } else {
      ++i;
    }
  }
  FollowedRecord r;
  r.header = h;
  r.blocks = header_blocks(h) + data_blocks(h);
  r.writes = 1;
  r.all_fua = w.fua;
  r.first_write = w.arrived;
  r.written = w.completed;
  if (h.lsn.block + std::uint64_t{r.blocks} <= first + blocks) {  // whole in this write: the common case
    finish(r, w, first, blocks);
    return;
  }
  Open o;
  o.record = r;
  o.covered.assign(o.record.blocks, 0);
  o.missing = o.record.blocks;
  cover(o, first, blocks);
  // Blocks written before their header (writes out of order) already carry
  // the record's cycle, or the next one past the end of the log.
  for (std::uint32_t j = 1; j < o.record.blocks && o.missing != 0; ++j) {
    if (o.covered[j] != 0) continue;
    const std::uint64_t at = (h.lsn.block + j) % log_blocks_;
    const std::uint32_t want = h.lsn.block + j < log_blocks_ ? h.cycle : h.cycle + 1;
    std::uint8_t word[4];
    log_.read(at * kBasicBlock, word);
    if (load_be<std::uint32_t>(word) == want) {
      o.covered[j] = 1;
      --o.missing;
    }
  }
  if (o.missing == 0) {
    finish(o.record, w, first, blocks);
    return;
  }
  if (open_.size() == kMaxOpen) {
    problem("the record at " + lsn_text(open_.front().record.header.lsn) + " was never written whole (" +
            std::to_string(open_.front().missing) + " of its blocks missing)");
    open_.pop_front();
  }
  open_.push_back(std::move(o));
}

bool LogFollower::cover(Open& o, std::uint64_t first, std::uint64_t n) const {
  const std::uint64_t start = o.record.header.lsn.block;
  const std::uint64_t end = start + o.record.blocks;  // may run past the log's end
  bool touched = false;
  auto mark = [&](std::uint64_t lo, std::uint64_t hi, std::uint64_t index_of_lo) {
    for (std::uint64_t x = lo; x < hi; ++x) {
      std::uint8_t& c = o.covered[index_of_lo + (x - lo)];
      if (c == 0) {
        c = 1;
        --o.missing;
      }
      touched = true;
    }
  };
  const std::uint64_t lo = std::max(first, start);
  const std::uint64_t hi = std::min({first + n, end, log_blocks_});
  if (lo < hi) mark(lo, hi, lo - start);
  if (end > log_blocks_) {  // its part at the log's start
    const std::uint64_t wrap_hi = std::min(first + n, end - log_blocks_);
    if (first < wrap_hi) mark(first, wrap_hi, log_blocks_ - start + first);
  }
  return touched;
}

void LogFollower::finish(FollowedRecord& r, const LogWrite& w, std::uint64_t first, std::uint64_t blocks) {
  const LogRecordHeader& h = r.header;
  std::span<const std::uint8_t> bytes;
  if (h.lsn.block >= first && h.lsn.block + r.blocks <= first + blocks) {
    bytes = w.bytes.subspan((h.lsn.block - first) * kBasicBlock, r.bytes());
  } else {
    buffer_.resize(r.bytes());
    for (std::uint64_t done = 0; done < r.blocks;) {
      const std::uint64_t at = (h.lsn.block + done) % log_blocks_;
      const std::uint64_t n = std::min<std::uint64_t>(r.blocks - done, log_blocks_ - at);
      log_.read(at * kBasicBlock, std::span(buffer_.data() + done * kBasicBlock, n * kBasicBlock));
      done += n;
    }
    bytes = buffer_;
  }
  r.crc = check_record_crc(h, bytes);
  ++totals_.records;
  totals_.operations += h.operations;
  totals_.record_bytes += r.bytes();
  switch (r.crc) {
    case CrcCheck::ok: ++totals_.crc_ok; break;
    case CrcCheck::bad: ++totals_.crc_bad; break;
    case CrcCheck::absent: ++totals_.crc_absent; break;
  }
  if (r.crc == CrcCheck::bad) {
    problem("the record at " + lsn_text(h.lsn) + " does not match its CRC");
  } else if (!have_newest_ || h.lsn > newest_) {
    have_newest_ = true;
    newest_ = h.lsn;
    const std::uint64_t next = std::uint64_t{h.lsn.block} + r.blocks;
    head_ = {h.cycle + (next >= log_blocks_ ? 1u : 0u), static_cast<std::uint32_t>(next % log_blocks_)};
    tail_ = h.tail;
  }
  events_.on_record(r);
  if (r.all_fua) {
    made_durable(r, r.written);
    return;
  }
  if (unflushed_.size() == kMaxUnflushed) unflushed_.pop_front();  // never flushed: no latency
  unflushed_.push_back(r);
}

void LogFollower::flush(Nanos arrived, Nanos completed) {
  ++totals_.flushes;
  for (auto it = unflushed_.begin(); it != unflushed_.end();) {
    if (it->written <= arrived) {
      made_durable(*it, completed);
      it = unflushed_.erase(it);
    } else {
      ++it;
    }
  }
}

void LogFollower::made_durable(FollowedRecord& r, Nanos at) {
  r.durable = at;
  ++totals_.durable;
  events_.on_durable(r);
}

void LogFollower::problem(const std::string& what) {
  ++totals_.problems;
  events_.on_problem(what);
}

double LogFollower::fill() const {
  if (!have_newest_ || log_blocks_ == 0) return 0;
  const std::int64_t used = (static_cast<std::int64_t>(head_.cycle) - static_cast<std::int64_t>(tail_.cycle)) *
                                static_cast<std::int64_t>(log_blocks_) +
                            static_cast<std::int64_t>(head_.block) - static_cast<std::int64_t>(tail_.block);
  return std::clamp(static_cast<double>(used) / static_cast<double>(log_blocks_), 0.0, 1.0);
}

}  // namespace fscore::xfs
