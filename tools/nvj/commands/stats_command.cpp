// SPDX-License-Identifier: BSD-3-Clause
// nvj stats: the statistics of a running server, from its control socket.
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "common/command_line.h"
#include "common/control_client.h"
#include "tools/nvj/commands.h"
#include "tools/nvj/host/processes/interrupt.h"

namespace nvj::cli {
namespace {

constexpr const char* kStatsText = R"(Show the statistics of a running server: per export and operation, counts,
bytes and latency percentiles; per device, its model and where its time went
(queueing, seeks, rotation, transfer, destaging), seeks and cache hits.
)";

struct StatsArgs {
  bool watch = false, reset = false, json = false, metrics = false;
  std::uint64_t interval = 1;
  std::string socket;
};

int stats_main(const StatsArgs& a) {
  const bool watch = a.watch;
  const std::uint64_t interval = a.interval;
  const std::string& socket = a.socket;
  const std::string target = a.json ? "/stats" : a.metrics ? "/metrics" : "/stats?format=text";
  if (socket.empty()) throw UsageError("nvj stats: which server? (nvj stats CONTROL-SOCKET)");
  if (a.reset) {
    control_call(socket, "POST", "/reset-stats");
  }
  catch_interrupts();
  do {
    const std::string body = control_call(socket, "GET", target);
    if (watch && isatty(STDOUT_FILENO)) std::fputs("\033[H\033[2J", stdout);
    std::fputs(body.c_str(), stdout);
    std::fflush(stdout);
    for (std::uint64_t i = 0; watch && !interrupted() && i < interval * 10; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
  } while (watch && !interrupted());
  return 0;
}

}  // namespace

CommandRun declare_stats(Command& app) {
  auto a = std::make_shared<StatsArgs>();
  app.describe(kStatsText);
  app.add("CONTROL", a->socket, "the socket the server was given with control=PATH");
  app.flag("--watch", a->watch, "redraw every interval until interrupted");
  app.count("--interval", a->interval, 1, 3600, "seconds between redraws (default 1)").value_name("SECONDS");
  auto json = app.flag("--json", a->json, "the raw JSON (GET /stats)");
  app.flag("--metrics", a->metrics, "the Prometheus text (GET /metrics)").excludes(json);
  app.flag("--reset", a->reset, "reset the statistics first");
  return [a] { return stats_main(*a); };
}

}  // namespace nvj::cli
