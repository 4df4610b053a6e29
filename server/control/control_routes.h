// SPDX-License-Identifier: BSD-3-Clause
// The control API's requests and answers, without sockets: the HTTP server
// (control_server) parses, this decides. Every answer is one of:
//   GET  /stats[?format=text]   200 JSON (or a table)
//   GET  /metrics               200 Prometheus text
//   GET  /journal[?format=text] 200 JSON (or a table)
//   POST /reset-stats           200
//   POST /mark?label=TEXT       200
//   POST /model?export=NAME&model=SPEC   200, or 400 naming what is wrong
//   POST /crash[?policy=all|random|reorder&seed=N&torn=SIZE&export=NAME]
//   POST /power-on[?export=NAME]
// 404 for other paths, 405 for a known path with the wrong method, 400 for
// bad parameters. Nothing changes when the answer is not 200.
//
// route_metrics is the metrics listener's (metrics=, over TCP): GET /metrics
// and nothing else, 404 for every other path, 405 for another method.
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "server/lab/lab.h"

namespace nvj {

struct ControlReply {
  unsigned status = 200;
  std::string content_type = "application/json";
  std::string body;
};

ControlReply route_control(Lab& lab, std::string_view method, std::string_view target);
ControlReply route_metrics(Lab& lab, std::string_view method, std::string_view target);

// "a=1&b=x%20y" -> {a: 1, b: "x y"}. Throws std::invalid_argument on a bad
// escape or a key given twice.
std::map<std::string, std::string, std::less<>> parse_query(std::string_view query);

}  // namespace nvj
