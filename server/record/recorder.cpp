#include "server/record/recorder.h"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <stdexcept>
#include <utility>

#include "server/store/io_error.h"

namespace nvj {

using fscore::record::FrameKind;

Recorder::Recorder(Options options, const std::vector<fscore::record::ExportInfo>& exports)
    : options_(std::move(options)) {
  status_.path = options_.path;
  file_ = std::make_unique<AppendFile>(options_.path, options_.direct_io);  // refuses an existing file
  try {
    encoder_.header(pending_, exports);
    file_->append(pending_.data(), pending_.size());
  } catch (const std::exception& e) {
    file_.reset();
    ::unlink(options_.path.c_str());
    throw std::invalid_argument(e.what());
  }
  status_.bytes_written = pending_.size();
  pending_.clear();
}

Recorder::~Recorder() { stop(); }

void Recorder::base(std::uint8_t device, Store& store) {
  std::lock_guard lock(mutex_);
  if (started_) throw std::logic_error("Recorder::base after start");
  std::vector<std::uint8_t> bytes;
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
        encoder_.base(pending_, device, at, bytes.data(), n);
        file_->append(pending_.data(), pending_.size());
        status_.bytes_written += pending_.size();
        status_.base_bytes += n;
        pending_.clear();
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
  started_ = true;
  writer_ = std::thread([this] { write_out(); });
}

void Recorder::overflowed() {
  stop_locked("the recording could not keep up: " + std::to_string(pending_.size()) + " bytes waited for " +
              options_.path + " (at most " + std::to_string(options_.buffer_bytes) + ")");
}

std::uint64_t Recorder::change(std::uint8_t device, FrameKind kind, std::uint64_t offset, std::uint32_t length,
                               const void* data, bool fua) {
  std::lock_guard lock(mutex_);
  if (!accepting()) return 0;
  const std::uint64_t id = ++next_id_;
  if (kind == FrameKind::write)
    encoder_.write(pending_, device, id, offset, data, length, fua);
  else if (kind == FrameKind::zero)
    encoder_.zero(pending_, device, id, offset, length, fua);
  else
    encoder_.trim(pending_, device, id, offset, length, fua);
  ++status_.changes;
  if (pending_.size() > options_.buffer_bytes) {
    overflowed();
    return 0;  // its acknowledgement would follow the end frame
  }
  nudge();
  return id;
}

void Recorder::ack(std::uint8_t device, std::uint64_t id, bool durable) {
  std::lock_guard lock(mutex_);
  if (!accepting()) return;
  encoder_.ack(pending_, device, id, durable);
  nudge();
}

void Recorder::failed(std::uint8_t device, std::uint64_t id) {
  std::lock_guard lock(mutex_);
  if (!accepting()) return;
  encoder_.failed(pending_, device, id);
  nudge();
}

std::uint64_t Recorder::flush(std::uint8_t device) {
  std::lock_guard lock(mutex_);
  if (!accepting()) return 0;
  const std::uint64_t id = ++next_id_;
  encoder_.flush(pending_, device, id);
  nudge();
  return id;
}

void Recorder::flush_done(std::uint8_t device, std::uint64_t id) {
  std::lock_guard lock(mutex_);
  if (!accepting()) return;
  encoder_.flush_done(pending_, device, id);
  nudge();
}

void Recorder::mark(std::uint64_t time_ns, std::string_view label) {
  std::lock_guard lock(mutex_);
  if (!accepting()) return;
  // A label longer than a frame takes is cut: the mark itself matters more.
  encoder_.mark(pending_, time_ns, label.substr(0, fscore::record::kMaxLabel));
  ++status_.marks;
  nudge();
}

void Recorder::nudge() {
  // The writer sleeps until a batch is worth a write (or kWriteEvery has
  // passed): waking it for every frame cost a futex call and a context
  // switch per request.
  if (writer_idle_ && pending_.size() >= kWakeBytes) {
    writer_idle_ = false;
    wake_.notify_one();
  }
}

void Recorder::stop_locked(const std::string& why) {
  if (!why.empty() && status_.error.empty()) {  // the first error is the one that matters
    status_.error = why;
    spdlog::error("recording {} stopped: {}", options_.path, why);
  }
  if (stopping_) return;
  stopping_ = true;
  encoder_.end(pending_, why);
  wake_.notify_one();
}

void Recorder::abort(const std::string& why) {
  std::lock_guard lock(mutex_);
  stop_locked(why);
}

void Recorder::write_out() {
  fscore::record::FrameEncoder::Buffer out;
  bool broken = false;  // a write failed: nothing more goes to the file
  std::unique_lock lock(mutex_);
  for (;;) {
    writer_idle_ = true;
    wake_.wait_for(lock, kWriteEvery, [&] { return pending_.size() >= kWakeBytes || stopping_; });
    writer_idle_ = false;
    if (pending_.empty()) {
      if (stopping_) break;  // and the end frame is out
      continue;
    }
    out.swap(pending_);
    lock.unlock();
    std::string error;
    if (!broken) {
      try {
        file_->append(out.data(), out.size());
      } catch (const IoError& e) {
        error = e.what();
      }
    }
    lock.lock();
    if (!broken && error.empty()) status_.bytes_written += out.size();
    if (!error.empty()) {
      broken = true;
      stop_locked(error);
    }
    out.clear();
  }
  if (broken) return;
  lock.unlock();
  std::string error;
  try {
    file_->finish();
  } catch (const IoError& e) {
    error = e.what();
  }
  lock.lock();
  if (!error.empty()) stop_locked(error);  // logged; the end frame may not be on the file
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
      pending_.clear();
      file_.reset();
      finished_ = true;
      return status_;
    }
    stop_locked("");
  }
  writer_.join();
  std::lock_guard lock(mutex_);
  pending_.clear();
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
  s.bytes_buffered = pending_.size();
  return s;
}

}  // namespace nvj
