// A client of the server's control API: one HTTP/1.1 request over the Unix
// socket given with control=PATH.
#pragma once

#include <string>

namespace nvj::cli {

struct ControlResponse {
  int status = 0;
  std::string body;
};

// Throws std::runtime_error if the socket cannot be reached or the answer is
// not HTTP.
ControlResponse control_request(const std::string& socket, const std::string& method, const std::string& target);

}  // namespace nvj::cli
