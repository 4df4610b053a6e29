// SPDX-License-Identifier: BSD-3-Clause
#include "server/record/recorder.h"

#include <pthread.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <utility>

#include "fscore/record/old_data.h"
#include "fscore/zeroes.h"
#include "server/store/io_error.h"

namespace nvj {

using fscore::record::FrameKind;

namespace {

// What a batch may hold beyond buffer_bytes: the largest frame, a pad and
// the end frame with its reason.
constexpr std::size_t kBatchSlack = fscore::record::kMaxPayload + fscore::record::kMaxLabel + 3 * AppendFile::kBlock;

// The base is recorded in blocks of this (a sector's multiple, so every
// run starts on a sector): those of zeroes left out, those of old data
// (fs-free=old-data's free blocks) as their ranges alone.
constexpr std::size_t kBaseBlock = 4096;

// Calls `run(from, length, old)` for each run of `bytes`' blocks that are
// old data (old) or hold anything but zeroes (not old), in order, joined
// where they touch and are of a kind.
template <typename Run>
void for_each_base_run(std::span<const std::uint8_t> bytes, Run&& run) {
  fscore::for_each_nonzero_run(bytes, kBaseBlock, [&](std::size_t from, std::size_t length) {
    std::size_t start = from;
    bool start_old = false;
    for (std::size_t at = from; at < from + length; at += kBaseBlock) {
      const std::size_t n = std::min(kBaseBlock, from + length - at);
      const bool old = fscore::record::is_old_data(bytes.subspan(at, n));
      if (at == from) start_old = old;
      if (old == start_old) continue;
      run(start, at - start, start_old);
      start = at;
      start_old = old;
    }
    run(start, from + length - start, start_old);
  });
}

}  // namespace

Recorder::Recorder(Options options, const std::vector<fscore::record::ExportInfo>& exports)
    : options_(std::move(options)) {
  status_.path = options_.path;
  file_ = std::make_unique<AppendFile>(options_.path, options_.direct_io);  // refuses an existing file
  fscore::record::FrameBuffer header;
  try {
    encoder_.header(header, exports);
    file_->append(header.data(), header.size());
  } catch (const std::exception& e) {
    file_.reset();
    ::unlink(options_.path.c_str());
    throw std::invalid_argument(e.what());
  }
  status_.bytes_written = header.size();
}

Recorder::~Recorder() { stop(); }

void Recorder::base(std::uint8_t device, Store& store) {
  std::lock_guard lock(mutex_);
  if (started_) throw std::logic_error("Recorder::base after start");
  std::vector<std::uint8_t> bytes;
  fscore::record::FrameBuffer frame;
  for (std::uint64_t offset = 0; offset < store.size();) {
    std::uint64_t next = offset;
    store.extents(offset, store.size() - offset, [&](const Extent& e) {
      next = e.offset + e.length;
      if (e.hole) return;
      for (std::uint64_t at = e.offset; at < e.offset + e.length;) {
        const auto n = static_cast<std::uint32_t>(std::min<std::uint64_t>(fscore::record::kBaseChunk,
                                                                          e.offset + e.length - at));
        bytes.resize(n);
        store.read(bytes.data(), n, at);
        for_each_base_run(bytes, [&](std::size_t from, std::size_t length, bool old) {
          if (old)
            encoder_.base_old_data(frame, device, at + from, length);
          else
            encoder_.base(frame, device, at + from, bytes.data() + from, length);
          file_->append(frame.data(), frame.size());
          status_.bytes_written += frame.size();
          status_.base_bytes += length;
          frame.clear();
        });
        at += n;
      }
    });
    if (next <= offset) break;
    offset = next;
  }
}

void Recorder::start() {
  std::lock_guard lock(mutex_);
  if (started_) return;
  // From here the file grows by whole blocks from the batches: a pad ends
  // what the header and the bases left.
  fscore::record::FrameBuffer pad;
  encoder_.pad(pad, file_->size(), AppendFile::kBlock);
  file_->append(pad.data(), pad.size());
  status_.bytes_written += pad.size();
  position_ = file_->size();
  // Reserved so that a pending write's frame never moves (the batch holds
  // at most buffer_bytes before a frame is added, then the recording stops).
  for (auto& batch : batches_) batch.reserve(options_.buffer_bytes + kBatchSlack);
  started_ = true;
  writer_ = std::thread([this] { write_out(); });
}

void Recorder::overflowed() {
  stop_locked("the recording could not keep up: " + std::to_string(filling().size()) + " bytes waited for " +
              options_.path + " (at most " + std::to_string(options_.buffer_bytes) + ")");
}

Recorder::PendingChange& Recorder::PendingChange::operator=(PendingChange&& other) noexcept {
  if (this != &other) {
    finish();
    recorder_ = std::exchange(other.recorder_, nullptr);
    frame_ = other.frame_;
    data_ = other.data_;
    batch_ = other.batch_;
    id_ = other.id_;
  }
  return *this;
}

void Recorder::PendingChange::finish() {
  if (recorder_ == nullptr) return;
  fscore::record::FrameEncoder::finish_write(frame_, data_);
  std::exchange(recorder_, nullptr)->finished_frame(batch_);
}

void Recorder::finished_frame(int batch) {
  // The writer waits for a sealed batch's open frames under mutex_; it
  // seals before it looks at open_, and we look at sealed_ after we count
  // down, so one of us sees the other (both sequentially consistent).
  if (open_[batch].fetch_sub(1) == 1 && sealed_[batch].load()) {
    std::lock_guard lock(mutex_);
    wake_.notify_one();
  }
}

Recorder::PendingChange Recorder::begin_change(std::uint8_t device, FrameKind kind, std::uint64_t offset,
                                               std::uint32_t length, const void* data, bool fua) {
  PendingChange pending;
  std::lock_guard lock(mutex_);
  if (!accepting()) return pending;
  const std::uint64_t id = ++next_id_;
  if (kind == FrameKind::write) {
    pending.frame_ = encoder_.begin_write(filling(), device, id, offset, length, fua);
    pending.recorder_ = this;
    pending.data_ = data;
    pending.batch_ = filling_;
    open_[filling_].fetch_add(1);
  } else if (kind == FrameKind::zero) {
    encoder_.zero(filling(), device, id, offset, length, fua);
  } else {
    encoder_.trim(filling(), device, id, offset, length, fua);
  }
  ++status_.changes;
  // When the recording stops here the frame is still filled, but the change
  // gets no id: its acknowledgement would follow the end frame.
  if (appended()) pending.id_ = id;
  return pending;
}

void Recorder::ack(std::uint8_t device, std::uint64_t id, bool durable) {
  std::lock_guard lock(mutex_);
  if (!accepting()) return;
  encoder_.ack(filling(), device, id, durable);
  appended();
}

void Recorder::failed(std::uint8_t device, std::uint64_t id) {
  std::lock_guard lock(mutex_);
  if (!accepting()) return;
  encoder_.failed(filling(), device, id);
  appended();
}

std::uint64_t Recorder::flush(std::uint8_t device) {
  std::lock_guard lock(mutex_);
  if (!accepting()) return 0;
  const std::uint64_t id = ++next_id_;
  encoder_.flush(filling(), device, id);
  appended();
  return id;
}

void Recorder::flush_done(std::uint8_t device, std::uint64_t id) {
  std::lock_guard lock(mutex_);
  if (!accepting()) return;
  encoder_.flush_done(filling(), device, id);
  appended();
}

void Recorder::mark(std::uint64_t time_ns, std::string_view label) {
  std::lock_guard lock(mutex_);
  if (!accepting()) return;
  // A label longer than a frame takes is cut: the mark itself matters more.
  encoder_.mark(filling(), time_ns, label.substr(0, fscore::record::kMaxLabel));
  ++status_.marks;
  appended();
}

bool Recorder::appended() {
  if (filling().size() > options_.buffer_bytes) {
    overflowed();
    return false;
  }
  // The writer sleeps until a batch is worth a write (or kWriteEvery has
  // passed): waking it for every frame cost a futex call and a context
  // switch per request.
  if (writer_idle_ && filling().size() >= kWakeBytes) {
    writer_idle_ = false;
    wake_.notify_one();
  }
  return true;
}

void Recorder::stop_locked(const std::string& why) {
  if (!why.empty() && status_.error.empty()) {  // the first error is the one that matters
    status_.error = why;
    spdlog::error("recording {} stopped: {}", options_.path, why);
  }
  if (stopping_) return;
  stopping_ = true;
  encoder_.end(filling(), std::string_view(why).substr(0, fscore::record::kMaxLabel));
  wake_.notify_one();
}

void Recorder::abort(const std::string& why) {
  {
    std::lock_guard lock(mutex_);
    stop_locked(why);
  }
  // The file is whole when abort returns, as after stop(): GET /record and
  // a reader of the file see the recording ended, end frame and all.
  stop();
}

void Recorder::write_out() {
  // Named, so that top -H, perf and bench/dm_log_writes_cost.sh tell its CPU
  // from the serving threads'.
  pthread_setname_np(pthread_self(), "nvj-recorder");
  bool broken = false;  // a write failed: nothing more goes to the file
  std::unique_lock lock(mutex_);
  for (;;) {
    writer_idle_ = true;
    wake_.wait_for(lock, kWriteEvery, [&] { return filling().size() >= kWakeBytes || stopping_; });
    writer_idle_ = false;
    if (filling().empty()) {
      if (stopping_) break;  // and the end frame is out
      continue;
    }
    // Nothing follows the end frame; any other batch is padded to a block.
    const bool last = stopping_;
    const int sealed = filling_;
    fscore::record::FrameBuffer& batch = batches_[sealed];
    if (!last) encoder_.pad(batch, position_ + batch.size(), AppendFile::kBlock);
    position_ += batch.size();
    sealed_[sealed].store(true);
    filling_ ^= 1;
    wake_.wait(lock, [&] { return open_[sealed].load() == 0; });
    lock.unlock();
    const std::size_t bytes = batch.size();
    std::string error;
    if (!broken) {
      try {
        write_batch(batch, last);
      } catch (const IoError& e) {
        error = e.what();
      }
    }
    lock.lock();
    if (!broken && error.empty()) status_.bytes_written += bytes;
    if (!error.empty()) {
      broken = true;
      stop_locked(error);  // logged; the end frame may not be on the file
    }
    batch.clear();
    sealed_[sealed].store(false);
    if (last) break;
  }
}

void Recorder::write_batch(fscore::record::FrameBuffer& batch, bool last) {
  if (!last) {
    file_->append_blocks(batch.data(), batch.size());
    return;
  }
  // The end of the recording: written in whole blocks too (the zeroes past
  // the end frame are cut off again by finish).
  const std::size_t tail = (AppendFile::kBlock - batch.size() % AppendFile::kBlock) % AppendFile::kBlock;
  std::memset(batch.extend(tail), 0, tail);
  file_->append_blocks(batch.data(), batch.size());
  file_->finish(file_->size() - tail);
}

Recorder::Status Recorder::stop() {
  {
    std::lock_guard lock(mutex_);
    if (finished_) return status_;
    if (!started_) {
      // A recorder never started leaves its file as it is (the header and
      // the starting contents written so far; a reader finds it truncated)
      // and says nothing: this process does not own the recording. nbdkit's
      // parent is such a process: it exits after its fork into the
      // background, its logger already gone, while the child records on in
      // the same file.
      file_.reset();
      finished_ = true;
      return status_;
    }
    stop_locked("");
  }
  writer_.join();
  std::lock_guard lock(mutex_);
  file_.reset();
  finished_ = true;
  status_.frames = encoder_.frames();
  status_.recording = false;
  status_.bytes_buffered = 0;
  spdlog::info("recording {}: {} frames, {} changes, {} marks, {} bytes", options_.path, status_.frames,
               status_.changes, status_.marks, status_.bytes_written);
  return status_;
}

Recorder::Status Recorder::status() const {
  std::lock_guard lock(mutex_);
  Status s = status_;
  s.recording = started_ && !stopping_;
  s.frames = encoder_.frames();
  s.bytes_buffered = started_ ? filling().size() : 0;
  return s;
}

}  // namespace nvj
