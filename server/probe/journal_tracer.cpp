// SPDX-License-Identifier: BSD-3-Clause
#include "server/probe/journal_tracer.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>

#include "fscore/endian.h"
#include "fscore/xfs/log_record.h"
#include "fscore/xfs/superblock.h"
#include "server/probe/journal_json.h"

namespace nvj {

using fscore::jbd2::JournalDecoder;
using fscore::jbd2::LogWrite;

namespace {

// Where a journal device's superblock may be: block 1024/bs + 1.
std::vector<std::uint64_t> device_superblock_offsets() { return {2048, 4096, 8192, 16384, 32768, 65536}; }

fscore::jbd2::DecoderTotals minus(fscore::jbd2::DecoderTotals a, const fscore::jbd2::DecoderTotals& b) {
  a.transactions -= b.transactions;
  a.descriptor_blocks -= b.descriptor_blocks;
  a.logged_blocks -= b.logged_blocks;
  a.metadata_blocks -= b.metadata_blocks;
  a.data_blocks -= b.data_blocks;
  a.escaped_blocks -= b.escaped_blocks;
  a.revoke_blocks -= b.revoke_blocks;
  a.revoked -= b.revoked;
  a.commit_blocks -= b.commit_blocks;
  a.fast_commit_blocks -= b.fast_commit_blocks;
  a.superblock_writes -= b.superblock_writes;
  a.checksum_errors -= b.checksum_errors;
  a.problems -= b.problems;
  a.log_blocks -= b.log_blocks;
  a.log_bytes -= b.log_bytes;
  a.full_time -= b.full_time;
  return a;
}

// Whether `bytes`, written at log byte `offset`, hold an XFS log record
// header where its LSN says it lies.
bool holds_xfs_record(std::span<const std::uint8_t> bytes, std::uint64_t offset) {
  using fscore::xfs::kBasicBlock;
  if (offset % kBasicBlock != 0) return false;
  for (std::size_t at = 0; at + kBasicBlock <= bytes.size(); at += kBasicBlock) {
    if (fscore::load_be<std::uint32_t>(bytes.data() + at) != fscore::xfs::kLogMagic) continue;
    const auto h = fscore::xfs::parse_record_header(bytes.subspan(at, kBasicBlock));
    if (h && h->lsn.block == (offset + at) / kBasicBlock) return true;
  }
  return false;
}

// Whether `bytes`, written at `offset` of the journal export, put a jbd2
// superblock where a journal device has it.
bool holds_jbd2_superblock(std::span<const std::uint8_t> bytes, std::uint64_t offset) {
  for (const std::uint64_t at : device_superblock_offsets())
    if (at >= offset && at + 4 <= offset + bytes.size() &&
        fscore::load_be<std::uint32_t>(bytes.data() + (at - offset)) == fscore::jbd2::kMagic)
      return true;
  return false;
}

}  // namespace

JournalTracer::LogSource::LogSource(Store& store, std::vector<std::pair<std::uint64_t, std::uint64_t>> region)
    : store_(store), region_(std::move(region)) {
  if (region_.empty()) {
    size_ = store_.size();
    return;
  }
  for (const auto& [offset, length] : region_) {
    log_starts_.push_back(size_);
    size_ += length;
  }
  by_store_.resize(region_.size());
  for (std::size_t i = 0; i < by_store_.size(); ++i) by_store_[i] = i;
  std::sort(by_store_.begin(), by_store_.end(),
            [&](std::size_t a, std::size_t b) { return region_[a].first < region_[b].first; });
}

std::uint64_t JournalTracer::LogSource::log_offset(std::uint64_t store_offset) const {
  if (region_.empty()) return store_offset;
  auto it = std::upper_bound(by_store_.begin(), by_store_.end(), store_offset,
                             [&](std::uint64_t o, std::size_t i) { return o < region_[i].first; });
  const std::size_t i = *std::prev(it);  // the device only reports pieces inside the region
  return log_starts_[i] + (store_offset - region_[i].first);
}

void JournalTracer::LogSource::read(std::uint64_t offset, std::span<std::uint8_t> bytes) const {
  if (region_.empty()) {
    store_.read(bytes.data(), static_cast<std::uint32_t>(bytes.size()), offset);
    return;
  }
  std::size_t done = 0;
  while (done < bytes.size()) {
    const std::uint64_t at = offset + done;
    const auto it = std::upper_bound(log_starts_.begin(), log_starts_.end(), at);
    const std::size_t i = static_cast<std::size_t>(it - log_starts_.begin()) - 1;
    const std::uint64_t within = at - log_starts_[i];
    const std::uint64_t n = std::min<std::uint64_t>(bytes.size() - done, region_[i].second - within);
    store_.read(bytes.data() + done, static_cast<std::uint32_t>(n), region_[i].first + within);
    done += n;
  }
}

JournalTracer::JournalTracer(Store& data, Store* journal, std::vector<std::pair<std::uint64_t, std::uint64_t>> region,
                             Clock& clock, Nanos epoch, int trace_fd)
    : data_(data),
      journal_(journal),
      internal_(journal == nullptr),
      clock_(clock),
      epoch_(epoch),
      trace_fd_(trace_fd),
      layout_(Ext4Layout::read(data)),
      source_(journal != nullptr ? *journal : data, journal != nullptr ? decltype(region){} : std::move(region)),
      data_view_(data, {}) {
  decoder_ = std::make_unique<JournalDecoder>(source_, *this,
                                              internal_ ? std::vector<std::uint64_t>{0} : device_superblock_offsets(),
                                              this);
  const std::uint32_t bs = layout_ ? layout_->block_size() : 4096;
  classifier_ = std::make_unique<TrafficClassifier>(layout_ ? &*layout_ : nullptr, &data_, bs);
  if (!layout_) read_xfs_superblock_locked();  // an XFS served as it is (fs=none over an image)
}

JournalTracer::~JournalTracer() {
  if (trace_fd_ >= 0) ::close(trace_fd_);
}

fscore::jbd2::LoggedKind JournalTracer::classify(std::uint64_t target, std::span<const std::uint8_t> content) const {
  if (!layout_) return fscore::jbd2::LoggedKind::kUnknown;
  return layout_->is_metadata(target, content) ? fscore::jbd2::LoggedKind::kMetadata
                                               : fscore::jbd2::LoggedKind::kData;
}

void JournalTracer::observe(const ObservedRequest& r, bool journal_device) {
  if (r.op != IoOp::write && r.op != IoOp::flush) return;
  if (mutex_.try_lock()) {
    std::lock_guard lock(mutex_, std::adopt_lock);
    drain_locked();
    apply_locked(r, journal_device);
  } else if (!inbox_.push(r, journal_device)) {  // full: wait this once
    std::lock_guard lock(mutex_);
    drain_locked();
    apply_locked(r, journal_device);
  }
  // What others left in the inbox while this thread held the mutex. The
  // fence pairs with push's increment: either this thread sees the entry,
  // or its owner's try_lock found the mutex free.
  std::atomic_thread_fence(std::memory_order_seq_cst);
  for (int pass = 0; pass < kDrainPasses && !inbox_.empty() && mutex_.try_lock(); ++pass) {
    std::lock_guard lock(mutex_, std::adopt_lock);
    drain_locked();
  }
}

void JournalTracer::drain_locked() const {
  if (inbox_.empty()) return;
  inbox_.take(draining_);
  for (const auto& e : draining_) apply_locked(e.request, e.journal_device);
}

void JournalTracer::apply_locked(const ObservedRequest& r, bool journal_device) const {
  if (r.op == IoOp::flush) {
    decoder_->flush(r.arrived);
    if (xfs_) xfs_->flush(r.arrived, r.completed);
    return;
  }
  if (journal_device || r.in_region) {
    journal_write_locked(r);
  } else {
    data_write_locked(r);
  }
}

std::span<const std::uint8_t> JournalTracer::bytes_of(const ObservedRequest& r, const fscore::BlockSource& source,
                                                      std::uint64_t at) const {
  if (r.data != nullptr) return {r.data, r.length};
  fetched_.resize(r.length);
  source.read(at, fetched_);
  return fetched_;
}

void JournalTracer::journal_write_locked(const ObservedRequest& r) const {
  if (internal_) classifier_->journal_write(r.length, r.device_time);
  const std::uint64_t at = source_.log_offset(r.offset);
  const auto bytes = bytes_of(r, source_, at);
  if (!internal_ && xfs_ && !xfs_internal_) {
    if (!holds_jbd2_superblock(bytes, at)) {
      xfs_->write({at, bytes, r.fua, r.arrived, r.completed});
      return;
    }
    xfs_.reset();  // the journal export was made a jbd2 journal
    problem_locked("the journal export now holds a jbd2 journal, not an XFS log");
  }
  // A log mkfs.xfs writes starts with a record at 1:0, even over a jbd2
  // journal followed until then.
  if (!internal_ && !xfs_ && (!decoder_->synchronized() || at == 0) && holds_xfs_record(bytes, at)) {
    start_xfs_locked(std::make_unique<LogSource>(*journal_, std::vector<std::pair<std::uint64_t, std::uint64_t>>{}),
                     xfs_external_bytes_ != 0 ? xfs_external_bytes_ : journal_->size(), false);
    xfs_->write({at, bytes, r.fua, r.arrived, r.completed});
    return;
  }
  decoder_->write(LogWrite{at, bytes, r.fua, r.arrived, r.completed});
}

void JournalTracer::data_write_locked(const ObservedRequest& r) const {
  if (xfs_ && xfs_internal_ && r.offset >= xfs_offset_ && r.offset + r.length <= xfs_offset_ + xfs_length_) {
    classifier_->journal_write(r.length, r.device_time);
    const std::uint64_t at = r.offset - xfs_offset_;
    const auto bytes = bytes_of(r, data_view_, r.offset);
    xfs_->write({at, bytes, r.fua, r.arrived, r.completed});
    return;
  }
  classifier_->data_write(r.offset, r.length, r.device_time);
  if (r.offset == 0 && !layout_) read_xfs_superblock_locked();  // mkfs.xfs writing its superblock
}

void JournalTracer::read_xfs_superblock_locked() const {
  std::optional<fscore::xfs::LogPlace> place;
  try {
    place = fscore::xfs::locate_log(data_view_);
  } catch (const std::exception& e) {
    problem_locked(std::string("the data export's XFS superblock: ") + e.what());
    return;
  }
  if (!place) {
    if (xfs_ && xfs_internal_) {  // byte 0 rewritten without XFS's magic: another filesystem now
      xfs_.reset();
      problem_locked("the data export no longer holds an XFS: its log is no longer followed");
    }
    return;
  }
  if (place->external) {
    xfs_external_bytes_ = place->length;
    if (xfs_ && !xfs_internal_) xfs_->set_log_blocks(place->length / fscore::xfs::kBasicBlock);
    return;
  }
  if (xfs_ && xfs_internal_ && xfs_offset_ == place->offset && xfs_length_ == place->length) return;
  xfs_offset_ = place->offset;
  xfs_length_ = place->length;
  start_xfs_locked(std::make_unique<LogSource>(data_, std::vector{std::pair{place->offset, place->length}}),
                   place->length, true);
}

void JournalTracer::start_xfs_locked(std::unique_ptr<fscore::BlockSource> log, std::uint64_t log_bytes,
                                     bool internal) const {
  xfs_internal_ = internal;
  xfs_ = std::make_unique<XfsLogTracer>(std::move(log), log_bytes / fscore::xfs::kBasicBlock,
                                        [this](const std::string& p) { problem_locked(p); });
}

void JournalTracer::problem_locked(std::string what) const {
  if (problems_.size() == kProblems) problems_.pop_front();
  problems_.push_back(std::move(what));
}

void JournalTracer::on_superblock(const fscore::jbd2::SuperblockUpdate& u) {
  if (u.start != 0) classifier_->tail_moved(u.sequence);
}

void JournalTracer::on_logged_block(const fscore::jbd2::LoggedBlock& b) {
  std::span<const std::uint8_t> home = b.content;
  if (b.escaped) {
    restored_.assign(b.content.begin(), b.content.end());
    fscore::store_be<std::uint32_t>(restored_.data(), fscore::jbd2::kMagic);
    home = restored_;
  }
  classifier_->logged(b.target, home);
}

void JournalTracer::on_commit(const fscore::jbd2::Transaction& t) {
  classifier_->committed(t.tid);
  commit_latency_.record(static_cast<std::uint64_t>(std::max<Nanos>(0, t.duration())));
  if (recent_.size() == kRecent) recent_.pop_front();
  recent_.push_back({t, decoder_->fill()});
  if (trace_fd_ >= 0) write_trace_line(recent_.back());
}

void JournalTracer::on_problem(const fscore::jbd2::ProblemReport& p) {
  problem_locked(std::string(fscore::jbd2::to_string(p.problem)) + ": " + p.detail);
}

void JournalTracer::write_trace_line(const CommittedTransaction& c) {
  const auto* format = decoder_->format();
  // Once per committed transaction, with the decoder's mutex held: never per request.
  std::string line = to_json_text(transaction_json(c.t, format ? format->block_size : 0, epoch_, c.fill_after));
  line += '\n';
  // A short or failed write loses a line of the trace, never the request.
  const ssize_t ignored = ::write(trace_fd_, line.data(), line.size());
  (void)ignored;
}

JournalReport JournalTracer::report() const {
  std::lock_guard lock(mutex_);
  drain_locked();
  JournalReport r;
  r.placement = internal_ ? "internal" : "external";
  r.format = decoder_->format() != nullptr ? "jbd2" : "unknown";
  if (xfs_) {
    r.format = "xfs";
    r.placement = xfs_internal_ ? "internal" : "external";
    r.xfs = xfs_->report(clock_.now());
  }
  if (const auto* f = decoder_->format()) {
    r.format_known = true;
    r.block_size = f->block_size;
    r.log_blocks = f->last - f->first;
  }
  r.synchronized = decoder_->synchronized();
  r.head = decoder_->head();
  r.tail = decoder_->tail();
  r.next_tid = decoder_->next_tid();
  r.fill = decoder_->fill();
  r.totals = minus(decoder_->totals(clock_.now()), baseline_);
  r.commit_latency = commit_latency_.summary();
  r.traffic = classifier_->totals();
  r.recent.assign(recent_.begin(), recent_.end());
  r.problems.assign(problems_.begin(), problems_.end());
  r.since = epoch_;
  return r;
}

void JournalTracer::reset() {
  std::lock_guard lock(mutex_);
  drain_locked();
  baseline_ = decoder_->totals(clock_.now());
  baseline_.longest_full = 0;
  if (xfs_) xfs_->reset();
  commit_latency_.reset();
  classifier_->reset();
  recent_.clear();
  problems_.clear();
}

}  // namespace nvj
