// SPDX-License-Identifier: BSD-3-Clause
// Recorder: the crash lab's recording of a running server, in the format of
// fscore/record/recording_format.h. The devices hand it every change (write,
// zero, trim) before its bytes land, in the order they land, every
// acknowledgement and failure, and every flush as it arrives and completes
// (server/device/device.h); the lab hands it the marks. It starts with the
// starting contents of each export (base), read while the exports' changes
// are paused, so that the recording alone rebuilds any state of the run.
//
// The calls on the request path only append a frame to a buffer in memory,
// under one mutex held for the few bytes of a frame's head: a write's frame
// is numbered and placed under it (begin_change, called in the order the
// changes land), and its bytes are copied in and checksummed after, outside
// every lock (PendingChange). A thread of the recorder's own writes the
// buffer to the file in batches (kWakeBytes, or every kWriteEvery): it
// seals the buffer with a pad frame to a whole block, swaps in the other
// one, waits for the writes still being copied into it, and writes it as it
// is (O_DIRECT where the filesystem allows it: append_file.h). The buffer
// is bounded (`buffer_bytes`): when the file cannot keep up, or a write to
// it fails (a full disk), the recording stops: the error is logged, what was
// buffered is written with an end frame that says why where the file still
// takes it, and from then on every call is a no-op that returns 0. The
// server keeps serving whatever the recording does. Memory: two buffers of
// at most buffer_bytes and one largest frame each.
//
// The file is created; an existing file is refused (std::invalid_argument
// naming it), so a recording never overwrites anything.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "fscore/record/frame_encoder.h"
#include "server/record/append_file.h"
#include "server/store/store.h"

namespace nvj {

class Recorder {
 public:
  struct Options {
    std::string path;
    std::uint64_t buffer_bytes = std::uint64_t{64} << 20;  // frames waiting for the file, at most
    // O_DIRECT where the filesystem takes it (append_file.h): it takes the
    // page cache's copy of every recorded byte off the CPUs (12.5% of a
    // profile's samples down to 1.9%) and leaves the page cache to the
    // workload. On this project's VMs the IOPS did not gain from it: the
    // host charges its disk work to the guest as stolen time
    // (bench/RESULTS.md, record_cost).
    bool direct_io = true;
  };
  struct Status {
    bool recording = false;  // started and not stopped
    std::string path;
    std::uint64_t frames = 0;          // appended, header and base included
    std::uint64_t changes = 0;         // writes, zeroes and trims recorded
    std::uint64_t marks = 0;
    std::uint64_t base_bytes = 0;      // starting contents recorded
    std::uint64_t bytes_written = 0;   // to the file so far
    std::uint64_t bytes_buffered = 0;  // appended, not yet written
    std::string error;                 // why it stopped early; empty if it did not
  };

  // Creates the file and writes the header for `exports` (in the order
  // their index names them). Throws std::invalid_argument for a file that
  // exists or cannot be created.
  Recorder(Options options, const std::vector<fscore::record::ExportInfo>& exports);
  ~Recorder();
  Recorder(const Recorder&) = delete;
  Recorder& operator=(const Recorder&) = delete;

  // The starting contents of export `device`: its allocated ranges, read
  // and written to the file at once (the caller has paused its changes),
  // less their 4 KiB blocks of zeroes, which a recording's reader takes as
  // zeroes anyway (an XFS log that mkfs zeroed is 64 MiB of them), and
  // with those of old data (fs-free=old-data) as their ranges alone.
  // Then start() once every export has its base.
  void base(std::uint8_t device, Store& store);
  void start();

  // A change's frame from begin_change until its bytes are in: they are
  // copied and the frame sealed when it goes (or by finish()), so that the
  // caller can let it go after its own lock. The data must live as long.
  class PendingChange {
   public:
    PendingChange() = default;
    ~PendingChange() { finish(); }
    PendingChange(PendingChange&& other) noexcept { *this = std::move(other); }
    PendingChange& operator=(PendingChange&& other) noexcept;
    PendingChange(const PendingChange&) = delete;
    PendingChange& operator=(const PendingChange&) = delete;

    // The change's id in the recording; 0 when it is not recorded (then
    // neither ack nor failed are called for it).
    std::uint64_t id() const { return id_; }
    void finish();

   private:
    friend class Recorder;
    Recorder* recorder_ = nullptr;  // set while the frame waits for its bytes
    fscore::record::FrameEncoder::OpenWrite frame_;
    const void* data_ = nullptr;
    int batch_ = 0;
    std::uint64_t id_ = 0;
  };

  // The request path. begin_change numbers a write, zero or trim in the
  // order of the calls: call it where the change's order against other
  // changes is decided (the device's write_order_). flush() returns the
  // flush's id, 0 when nothing is recorded.
  PendingChange begin_change(std::uint8_t device, fscore::record::FrameKind kind, std::uint64_t offset,
                             std::uint32_t length, const void* data, bool fua);
  void ack(std::uint8_t device, std::uint64_t id, bool durable);
  void failed(std::uint8_t device, std::uint64_t id);
  std::uint64_t flush(std::uint8_t device);
  void flush_done(std::uint8_t device, std::uint64_t id);
  void mark(std::uint64_t time_ns, std::string_view label);

  // Ends the recording with an error (a power cut, say): logged and kept
  // in the end frame; the file is written out and closed before it
  // returns, as by stop(). No-op once stopped.
  void abort(const std::string& why);
  // Ends the recording: the end frame written, the file synced and closed.
  // Returns the final status; again after the first call. A recorder never
  // started does not touch its file again (nbdkit's parent, after its fork
  // into the background, must not end the child's recording).
  Status stop();
  Status status() const;

 private:
  // Frames are written in batches of at least this many bytes, or what
  // there is every kWriteEvery.
  static constexpr std::size_t kWakeBytes = 256 * 1024;
  static constexpr std::chrono::milliseconds kWriteEvery{20};

  // Caller holds mutex_.
  bool accepting() const { return started_ && !stopping_; }
  fscore::record::FrameBuffer& filling() { return batches_[filling_]; }
  const fscore::record::FrameBuffer& filling() const { return batches_[filling_]; }
  // After a frame: stops the recording if the batch is over buffer_bytes
  // (false), else wakes the writer if the batch is worth a write.
  bool appended();
  void overflowed();
  void stop_locked(const std::string& why);
  void write_out();  // the writer thread
  // Writes a sealed batch; the last one (the end frame's) also ends the file.
  void write_batch(fscore::record::FrameBuffer& batch, bool last);
  void finished_frame(int batch);  // a pending write's bytes are in

  const Options options_;
  std::unique_ptr<AppendFile> file_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  fscore::record::FrameEncoder encoder_;
  // The frames go into batches_[filling_]; the writer writes the other.
  fscore::record::FrameBuffer batches_[2];
  int filling_ = 0;
  // Per batch: write frames begun and not finished, and whether the writer
  // has sealed it (then it waits for open_ to reach 0).
  std::atomic<std::uint32_t> open_[2] = {0, 0};
  std::atomic<bool> sealed_[2] = {false, false};
  std::uint64_t position_ = 0;  // where the batch being filled starts in the file
  bool started_ = false;
  bool stopping_ = false;  // no more frames; the writer drains and closes
  bool finished_ = false;  // the file is closed
  bool writer_idle_ = false;  // the writer waits for a batch
  std::uint64_t next_id_ = 0;
  Status status_;
  std::thread writer_;
};

}  // namespace nvj
