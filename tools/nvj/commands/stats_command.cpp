// nvj stats: the statistics of a running server, from its control socket.
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "common/args.h"
#include "tools/nvj/commands.h"
#include "tools/nvj/client/control_client.h"

namespace nvj::cli {
namespace {

constexpr const char* kStatsHelp = R"(Usage: nvj stats [--watch] [--interval SECONDS] [--json | --metrics] CONTROL

Show the statistics of a running server: per export and operation, counts,
bytes and latency percentiles; per device, its model and where its time went
(queueing, seeks, rotation, transfer, destaging), seeks and cache hits.
CONTROL is the socket the server was given with control=PATH.

  --watch            redraw every interval until interrupted
  --interval SECONDS between redraws (default 1, 1 to 3600)
  --json             the raw JSON (GET /stats)
  --metrics          the Prometheus text (GET /metrics)
  --reset            reset the statistics first
)";

volatile std::sig_atomic_t g_stop = 0;
void on_signal(int) { g_stop = 1; }

}  // namespace

int stats_command(const std::vector<std::string>& argv) {
  Args args("stats", argv);
  bool watch = false;
  bool reset = false;
  std::uint64_t interval = 1;
  std::string target = "/stats?format=text";
  std::string socket;
  std::string item;
  while (args.next(item)) {
    if (item == "--help" || item == "-h") {
      std::fputs(kStatsHelp, stdout);
      return 0;
    } else if (item == "--watch") {
      watch = true;
    } else if (item == "--interval") {
      interval = args.number(item, 1, 3600);
    } else if (item == "--json") {
      target = "/stats";
    } else if (item == "--metrics") {
      target = "/metrics";
    } else if (item == "--reset") {
      reset = true;
    } else if (item.rfind("-", 0) != 0 && socket.empty()) {
      socket = item;
    } else {
      args.unknown(item);
    }
  }
  if (socket.empty()) throw UsageError("nvj stats: which server? (nvj stats CONTROL-SOCKET)");
  if (reset) {
    control_call(socket, "POST", "/reset-stats");
  }
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  do {
    const std::string body = control_call(socket, "GET", target);
    if (watch && isatty(STDOUT_FILENO)) std::fputs("\033[H\033[2J", stdout);
    std::fputs(body.c_str(), stdout);
    std::fflush(stdout);
    for (std::uint64_t i = 0; watch && !g_stop && i < interval * 10; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
  } while (watch && !g_stop);
  return 0;
}

}  // namespace nvj::cli
