// SPDX-License-Identifier: BSD-3-Clause
// post_mark: a labelled mark posted to a running server's control socket
// (POST /mark?label=, the plugin manual's CONTROL API), for the programs
// that post facts as they run: the workloads, which also run statically
// linked inside a VM. To a control socket it is one request through the
// control client (common/control_client.h); it returns once the server has
// answered, so the mark is in the server's statistics (and its recording)
// by then.
#pragma once

#include <chrono>
#include <string>
#include <string_view>

#include "common/control_client.h"

namespace nvj {

// What went wrong, naming the socket or the serial line: it could not be
// reached, it did not answer in time, or it answered something other than
// 200 (its answer quoted). The control client's error: error() is the errno,
// 0 when the server (or the host) answered.
using MarkError = ControlError;

// `target` is a control socket, or a character device: a serial line to
// the host (nvj vm gives its guest /dev/ttyS1). On a serial line the mark
// goes as one line, "nvj-mark " and the label percent-encoded
// (query_escape), the line set raw at 115200 baud and held (flock) until
// the host answers: it relays each such line as POST /mark
// (post_escaped_mark) and answers "nvj-marked" once the server has it, or
// "nvj-mark-refused " and why. So it returns once the mark is in the
// server's recording, from a guest as from the host: a fact that says more
// lands after the call that made it durable, one that says less (posted
// before a change) before that change's writes.
void post_mark(const std::string& target, std::string_view label,
               std::chrono::milliseconds timeout = std::chrono::seconds(10));

// What a serial line's "nvj-mark " lines carry after that prefix, and the
// host's answers.
inline constexpr std::string_view kSerialMarkPrefix = "nvj-mark ";
inline constexpr std::string_view kSerialMarked = "nvj-marked";
inline constexpr std::string_view kSerialRefused = "nvj-mark-refused ";

// A request to the host's lab over the serial line: one line,
// "nvj-lab " and `words`, answered as a mark is (kSerialMarked once the
// host has done it, kSerialRefused and why). nvj crash explore --vm's guest
// asks this way for the server's base to be restored and a recording
// started before a workload ("begin N"), and the recording stopped after it
// ("end N TRACE", the trace percent-encoded): tools/nvj/vm/fact_relay.h.
void serial_lab_request(const std::string& device, std::string_view words,
                        std::chrono::milliseconds timeout = std::chrono::seconds(30));
inline constexpr std::string_view kSerialLabPrefix = "nvj-lab ";

// POST /mark with a label already percent-encoded (what follows "nvj-mark "
// on a serial line); the same errors as post_mark.
void post_escaped_mark(const std::string& socket_path, std::string_view escaped_label,
                       std::chrono::milliseconds timeout = std::chrono::seconds(10));

}  // namespace nvj
