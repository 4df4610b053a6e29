// Recorder: the crash lab's recording of a running server, in the format of
// fscore/record/recording_format.h. The devices hand it every change (write,
// zero, trim) before its bytes land, in the order they land, every
// acknowledgement and failure, and every flush as it arrives and completes
// (server/device/device.h); the lab hands it the marks. It starts with the
// starting contents of each export (base), read while the exports' changes
// are paused, so that the recording alone rebuilds any state of the run.
//
// The calls on the request path only append a frame to a buffer in memory,
// under one mutex; a thread of the recorder's own writes the buffer to the
// file in batches (kWakeBytes, or every kWriteEvery). The buffer is bounded (`buffer_bytes`): when the file cannot keep up,
// or a write to it fails (a full disk), the recording stops: the error is
// logged, what was buffered is written with an end frame that says why
// where the file still takes it, and from then on every call is a no-op
// that returns 0. The server keeps serving whatever the recording does.
//
// The file is created; an existing file is refused (std::invalid_argument
// naming it), so a recording never overwrites anything.
#pragma once

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
    // O_DIRECT where the filesystem takes it (append_file.h). Off: on this
    // 2-CPU VM recording/off measured 0.61 with it and 0.71 without
    // (bench/RESULTS.md, record_cost), though it cut the write path's CPU.
    bool direct_io = false;
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
  // and written to the file at once (the caller has paused its changes).
  // Then start() once every export has its base.
  void base(std::uint8_t device, Store& store);
  void start();

  // The request path. change() returns the change's id, 0 when nothing is
  // recorded (then ack and failed are not called for it); flush() likewise.
  std::uint64_t change(std::uint8_t device, fscore::record::FrameKind kind, std::uint64_t offset,
                       std::uint32_t length, const void* data, bool fua);
  void ack(std::uint8_t device, std::uint64_t id, bool durable);
  void failed(std::uint8_t device, std::uint64_t id);
  std::uint64_t flush(std::uint8_t device);
  void flush_done(std::uint8_t device, std::uint64_t id);
  void mark(std::uint64_t time_ns, std::string_view label);

  // Ends the recording with an error (a power cut, say): logged and kept
  // in the end frame. No-op once stopped.
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
  void nudge();  // wakes the writer when a batch is ready
  void overflowed();
  void stop_locked(const std::string& why);
  void write_out();  // the writer thread

  const Options options_;
  std::unique_ptr<AppendFile> file_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  fscore::record::FrameEncoder encoder_;
  fscore::record::FrameEncoder::Buffer pending_;
  bool started_ = false;
  bool stopping_ = false;  // no more frames; the writer drains and closes
  bool finished_ = false;  // the file is closed
  bool writer_idle_ = false;  // the writer waits for a batch
  std::uint64_t next_id_ = 0;
  Status status_;
  std::thread writer_;
};

}  // namespace nvj
