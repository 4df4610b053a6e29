// SPDX-License-Identifier: BSD-3-Clause
// Routes spdlog through nbdkit's own debug log, so the server's messages
// appear with `nbdkit -v` and nowhere else (nbdkit decides: stderr or syslog).
#pragma once

#include <nbdkit-plugin.h>
#include <spdlog/sinks/base_sink.h>

#include <mutex>
#include <string>

namespace nvj {

class NbdkitLogSink final : public spdlog::sinks::base_sink<std::mutex> {
 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    const std::string text(msg.payload.data(), msg.payload.size());
    if (msg.level >= spdlog::level::err)
      nbdkit_error("%s", text.c_str());
    else
      nbdkit_debug("%s", text.c_str());
  }
  void flush_() override {}
};

}  // namespace nvj
