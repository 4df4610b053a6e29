// SPDX-License-Identifier: BSD-3-Clause
// Boost.Asio and Boost.Beast, as the control API's server and client use
// them (Unix and generic stream sockets, an acceptor, a timer, HTTP/1.1),
// included once the way Debian 12's Boost 1.74 and GCC 12 need:
//   - <utility> first: Asio 1.74 uses std::exchange without including it;
//   - GCC 12 at -O2 and above reports a "potential null pointer
//     dereference" inside Asio itself (scheduler::compensating_work_started
//     in boost/asio/detail/impl/scheduler.ipp, inlined into the epoll
//     reactor): -Wnull-dereference is off for these headers only, on for
//     the code that includes them.
#pragma once

#include <utility>

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wnull-dereference"
#include <boost/asio/basic_socket_acceptor.hpp>
#include <boost/asio/generic/stream_protocol.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#pragma GCC diagnostic pop
