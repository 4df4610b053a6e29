// ControlServer: the control API (control_routes) over HTTP/1.1 on a Unix
// socket with mode 0600, served by one thread (Boost.Asio and Beast).
//
// The socket is bound when the server is made, so a bad path fails at
// start-up; the thread starts later (nbdkit's after_fork: threads do not
// survive its fork into the background). A request may not exceed 8 KiB of
// headers or 64 KiB of body and must arrive within 10 s; one that does not,
// or does not parse, gets a 400 (or nothing, if the peer is gone) and its
// connection is closed. One answer per connection.
#pragma once

#include <memory>
#include <string>

#include "server/lab/lab.h"

namespace nvj {

class ControlServer {
 public:
  // Binds and listens. Throws std::runtime_error saying why not (the caller
  // names the parameter). A stale socket file nobody listens on is replaced;
  // a live one, or any other file, is refused.
  ControlServer(Lab& lab, std::string path);
  ~ControlServer();
  ControlServer(const ControlServer&) = delete;
  ControlServer& operator=(const ControlServer&) = delete;

  void start();
  // Joins the thread; removes the socket file if this process served it.
  // (nbdkit binds in one process and serves in its child when it goes into
  // the background: the parent's exit must not remove the child's socket.)
  void stop();
  const std::string& path() const { return path_; }

 private:
  struct Impl;
  Lab& lab_;
  std::string path_;
  int listen_fd_ = -1;
  bool served_ = false;  // start() ran in this process
  std::unique_ptr<Impl> impl_;
};

}  // namespace nvj
