// SPDX-License-Identifier: BSD-3-Clause
// FactRelay: the host's end of the guest's serial line for marks. QEMU
// serves the guest's second serial port (/dev/ttyS1) on a Unix socket; the
// relay connects to it and posts every "nvj-mark LABEL" line the guest's
// workloads write (common/mark_client.h) to the server's control socket as
// POST /mark, in the order they arrive, on a thread of its own, and answers
// each on the same line ("nvj-marked", or "nvj-mark-refused " and why) once
// the server has it: the guest's post_mark waits for that answer. A guest
// writes a fact that says more only after the call that made it durable has
// returned, so the mark reaches the server's recording after that call's
// flush (late, never early); one that says less before the call that
// changes what is there, which it makes only after the answer, so the mark
// is in the recording before that call's writes. Lines "nvj-lab WORDS"
// (serial_lab_request) go to the lab handler, when there is one, answered
// the same way once it returns (refused with what it threw). Other lines
// are counted and dropped.
#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>

namespace nvj::cli {

class FactRelay {
 public:
  // Starts the thread; it connects to `serial_socket` as soon as it exists
  // (QEMU makes it when it starts).
  using LabHandler = std::function<void(std::string_view words)>;
  FactRelay(std::filesystem::path serial_socket, std::string control, LabHandler lab = {});
  ~FactRelay();
  FactRelay(const FactRelay&) = delete;
  FactRelay& operator=(const FactRelay&) = delete;

  // Waits for the line to close (QEMU has exited) and the last marks to be
  // posted, at most `wait`; then stops.
  void finish(std::chrono::milliseconds wait = std::chrono::seconds(10));

  std::uint64_t relayed() const { return relayed_; }
  std::uint64_t ignored() const { return ignored_; }
  // The first mark the server did not take, or "" (the run's facts are then
  // incomplete: the caller fails the run).
  std::string error() const;

 private:
  void run();

  std::filesystem::path socket_;
  std::string control_;
  LabHandler lab_;
  std::atomic<bool> stop_{false};
  std::atomic<std::uint64_t> relayed_{0}, ignored_{0};
  mutable std::mutex mutex_;
  std::string error_;
  std::thread thread_;
};

}  // namespace nvj::cli
