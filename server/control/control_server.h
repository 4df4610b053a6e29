// SPDX-License-Identifier: BSD-3-Clause
// ControlServer: the lab over HTTP/1.1, served by one thread (Boost.Asio and
// Beast), on up to two listeners:
//   - the control API (route_control: every route) on a Unix socket with
//     mode 0600 (control=);
//   - the metrics listener (route_metrics: GET /metrics and nothing else) on
//     TCP (metrics=), for Prometheus.
//
// Sockets are bound when listen_*() is called, so a bad path or address
// fails at start-up; the thread starts later (nbdkit's after_fork: threads do
// not survive its fork into the background). A request may not exceed 8 KiB
// of headers or 64 KiB of body and must arrive within 10 s; one that does
// not, or does not parse, gets a 400 (or nothing, if the peer is gone) and
// its connection is closed. One answer per connection.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "server/lab/config.h"
#include "server/lab/lab.h"

namespace nvj {

class ControlServer {
 public:
  explicit ControlServer(Lab& lab);
  ~ControlServer();
  ControlServer(const ControlServer&) = delete;
  ControlServer& operator=(const ControlServer&) = delete;

  // Each binds and listens, or throws std::runtime_error saying why not (the
  // caller names the parameter); before start().
  // The control API on the Unix socket `path`. A stale socket file nobody
  // listens on is replaced; a live one, or any other file, is refused.
  void listen_control(std::string path);
  // GET /metrics on TCP: the address resolved (empty: 127.0.0.1), the first
  // of its addresses that binds.
  void listen_metrics(const ListenAddress& address);

  void start();
  // Joins the thread; removes the socket file if this process served it.
  // (nbdkit binds in one process and serves in its child when it goes into
  // the background: the parent's exit must not remove the child's socket.)
  void stop();

 private:
  struct Listener {
    int fd = -1;
    int family = 0;              // AF_UNIX, AF_INET, AF_INET6
    bool metrics_only = false;   // route_metrics, else route_control
  };
  struct Impl;
  Lab& lab_;
  std::string path_;  // the control socket's, once bound
  std::vector<Listener> listeners_;  // bound, not yet served
  bool served_ = false;              // start() ran in this process
  std::unique_ptr<Impl> impl_;
};

}  // namespace nvj
