// SPDX-License-Identifier: BSD-3-Clause
// A client of the server's control API: one HTTP/1.1 request over the Unix
// socket given with control=PATH (Boost.Beast, as the server), answered
// within a time limit. In common/ because the workloads post their marks
// with it too (common/mark_client.h), statically linked inside a VM; it
// needs only Boost's headers.
#pragma once

#include <chrono>
#include <stdexcept>
#include <string>

namespace nvj {

// What went wrong, naming the socket; error() is the errno when the socket
// failed (ETIMEDOUT when nothing answered in time), 0 when the server
// answered something that was not a good answer.
class ControlError : public std::runtime_error {
 public:
  ControlError(const std::string& what, int error) : std::runtime_error(what), error_(error) {}
  int error() const { return error_; }

 private:
  int error_;
};

struct ControlResponse {
  int status = 0;
  std::string body;
};

inline constexpr std::chrono::milliseconds kControlTimeout = std::chrono::seconds(30);

// Sends METHOD TARGET and reads the whole answer: its Content-Length, its
// chunks, or up to the server's close. Any HTTP status is returned. Throws
// ControlError naming the socket when it cannot be reached ("control
// socket S: connection refused ..."), when nothing has answered within
// `timeout`, when it closes before the answer is complete, or when the
// answer is not HTTP ("control socket S: not HTTP: ...").
ControlResponse control_request(const std::string& socket, const std::string& method, const std::string& target,
                                std::chrono::milliseconds timeout = kControlTimeout);

// control_request for an answer of 200: its body. Any other status is a
// ControlError "control socket S: POST /x answered 400: BODY".
std::string control_call(const std::string& socket, const std::string& method, const std::string& target,
                         std::chrono::milliseconds timeout = kControlTimeout);

}  // namespace nvj
