// SPDX-License-Identifier: BSD-3-Clause
// GuestConsole: the guest's serial console as it arrives, split into the
// kernel's boot messages, the markers /init prints (guest_init.h) and, in
// between a step's begin and end markers, the step's own output. Pure: fed
// bytes, it returns lines, so it is tested without a VM.
#pragma once

#include <deque>
#include <string>
#include <string_view>
#include <vector>

namespace nvj::cli {

struct ConsoleLine {
  enum class Kind {
    boot,    // outside the step: the kernel booting, /init, shutdown
    output,  // the step's output (stdout and stderr as the console shows them)
    kernel,  // a kernel message that came while the step ran (an I/O error...)
    marker,  // one of /init's markers
  };
  Kind kind;
  std::string text;  // without the line end; for a marker, the whole line
};

class GuestConsole {
 public:
  explicit GuestConsole(std::string token);

  // The complete lines in `bytes` and what came before them.
  std::vector<ConsoleLine> feed(std::string_view bytes);
  // The last, unfinished line, once the guest is gone.
  std::vector<ConsoleLine> finish();

  bool begun() const { return begun_; }
  bool ended() const { return ended_; }
  int status() const { return status_; }          // the step's exit status, once ended()
  bool unmounted() const { return unmounted_; }   // /init unmounted /mnt after the step
  const std::string& failure() const { return failure_; }  // what /init said failed, or ""
  // The kernel's messages about the filesystem from mount time (ext4 and
  // jbd2: "EXT4-fs (sda): recovery complete"), without their time stamps.
  const std::vector<std::string>& filesystem_log() const { return filesystem_log_; }
  // The last lines of the console, for an error message.
  std::string tail() const;

 private:
  ConsoleLine classify(std::string line);

  std::string prefix_;
  std::string partial_;
  bool begun_ = false, ended_ = false, unmounted_ = false;
  int status_ = -1;
  std::string failure_;
  std::vector<std::string> filesystem_log_;
  std::deque<std::string> tail_;
};

// "[    3.141592] text" -> "text"; anything else as it is.
std::string without_timestamp(const std::string& line);

}  // namespace nvj::cli
