// SPDX-License-Identifier: BSD-3-Clause
// nvj bench: latency and IOPS of one export, as a client sees them, through
// libnbd with a fixed number of requests in flight.
#include <libnbd.h>

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/command_line.h"
#include "common/clock.h"
#include "common/json.h"
#include "common/percentile.h"
#include "common/size.h"
#include "tools/nvj/client/server_address.h"
#include "tools/nvj/commands.h"

namespace nvj::cli {
namespace {

constexpr const char* kBenchText = R"(Measure one export as a client sees it: keep DEPTH requests in flight for
SECONDS and print IOPS, bandwidth and the latency distribution (p50, p90,
p99, p99.9, max).
)";

struct Options {
  std::uint64_t depth = 1;
  std::uint64_t block = 4096;
  std::uint64_t write_percent = 100;
  bool sequential = false;
  std::uint64_t span = 0;
  std::uint64_t offset = 0;
  std::uint64_t seconds = 10;
  bool fua = false;
  bool busy_poll = false;
  std::uint64_t seed = 1;
  bool json = false;
  std::string uri;
  std::string pattern = "random";
  TlsOptions tls;
};

class Bench {
 public:
  Bench(const Options& o, nbd_handle* h, std::uint64_t size) : o_(o), h_(h), rng_(o.seed), buffer_(o.block) {
    for (std::size_t i = 0; i < buffer_.size(); ++i) buffer_[i] = static_cast<char>(i * 31 + 7);
    span_ = o.span == 0 ? size - o.offset : o.span;
    if (o.offset >= size || span_ > size - o.offset)
      throw std::runtime_error("the span lies beyond the export (" + format_size(size) + ")");
    if (span_ < o.block) throw std::runtime_error("the span is smaller than one block");
    slots_ = span_ / o.block;
    // What the export tells its clients (docs/nbdkit-nvjournal-plugin.pod).
    if (o.fua && nbd_can_fua(h) != 1)
      throw UsageError("nvj bench: --fua: the export offers no FUA (it is write-through: its writes are durable "
                       "when acknowledged)");
    const std::int64_t sector = nbd_get_block_size(h, LIBNBD_SIZE_MINIMUM);
    if (sector > 1 && (o.block % static_cast<std::uint64_t>(sector) != 0 ||
                       o.offset % static_cast<std::uint64_t>(sector) != 0))
      throw UsageError("nvj bench: --block-size and --offset must be whole " + std::to_string(sector) +
                       "-byte sectors, the export's smallest request");
  }

  void run() {
    const Nanos start = clock_.now();
    const Nanos end = start + static_cast<Nanos>(o_.seconds) * kSecond;
    while (true) {
      const bool more = clock_.now() < end;
      while (more && nbd_aio_in_flight(h_) < static_cast<int>(o_.depth)) issue();
      if (nbd_aio_in_flight(h_) == 0) break;
      if (nbd_poll(h_, o_.busy_poll ? 0 : -1) == -1)
        throw std::runtime_error(std::string("nbd_poll: ") + nbd_get_error());
      if (failed_ > 0) throw std::runtime_error("a request failed: " + error_);
    }
    elapsed_ = clock_.now() - start;
  }

  // Exact percentiles from every sample (nearest rank).
  struct Summary {
    std::uint64_t count = 0, sum = 0, max = 0;
    std::uint64_t p50 = 0, p90 = 0, p99 = 0, p999 = 0;
  };
  Summary summary() const {
    Summary s;
    std::vector<std::uint64_t> v = samples_;
    s.count = v.size();
    if (v.empty()) return s;
    std::sort(v.begin(), v.end());
    for (const auto x : v) s.sum += x;
    s.max = v.back();
    s.p50 = percentile(v, 0.5);
    s.p90 = percentile(v, 0.9);
    s.p99 = percentile(v, 0.99);
    s.p999 = percentile(v, 0.999);
    return s;
  }

  void print(const std::string& uri) const {
    const auto s = summary();
    const double secs = static_cast<double>(elapsed_) / 1e9;
    const double iops = static_cast<double>(s.count) / secs;
    const double mib = iops * static_cast<double>(o_.block) / (1 << 20);
    auto us = [](std::uint64_t ns) { return static_cast<double>(ns) / 1e3; };
    const double mean = s.count == 0 ? 0 : us(s.sum) / static_cast<double>(s.count);
    if (o_.json) {
      const Json latency{{"p50", json_round(us(s.p50), 3)},   {"p90", json_round(us(s.p90), 3)},
                         {"p99", json_round(us(s.p99), 3)},   {"p999", json_round(us(s.p999), 3)},
                         {"max", json_round(us(s.max), 3)},   {"mean", json_round(mean, 3)}};
      const Json j{{"uri", uri},
                   {"depth", o_.depth},
                   {"block_size", o_.block},
                   {"write_percent", o_.write_percent},
                   {"pattern", o_.sequential ? "sequential" : "random"},
                   {"seconds", json_round(secs, 3)},
                   {"requests", s.count},
                   {"iops", json_round(iops, 1)},
                   {"mib_per_s", json_round(mib, 2)},
                   {"latency_us", latency}};
      std::printf("%s\n", to_json_text(j).c_str());
      return;
    }
    std::printf("%s: %llu-byte %s %s, depth %llu, %.1f s\n", uri.c_str(),
                static_cast<unsigned long long>(o_.block), o_.sequential ? "sequential" : "random",
                o_.write_percent == 100 ? "writes"
                : o_.write_percent == 0 ? "reads"
                                        : fmt::format("{}% writes", o_.write_percent).c_str(),
                static_cast<unsigned long long>(o_.depth), secs);
    std::printf("  requests %llu, %.1f IOPS, %.2f MiB/s\n", static_cast<unsigned long long>(s.count), iops, mib);
    std::printf("  latency us: p50 %.1f  p90 %.1f  p99 %.1f  p99.9 %.1f  max %.1f  mean %.1f\n", us(s.p50), us(s.p90),
                us(s.p99), us(s.p999), us(s.max), mean);
  }

 private:
  struct Pending {
    Bench* bench;
    Nanos started;
  };

  void issue() {
    const std::uint64_t slot = o_.sequential ? next_++ % slots_ : rng_() % slots_;
    const std::uint64_t offset = o_.offset + slot * o_.block;
    const bool write = rng_() % 100 < o_.write_percent;
    auto* p = new Pending{this, clock_.now()};
    nbd_completion_callback cb{};
    cb.callback = [](void* user, int* error) {
      auto* pending = static_cast<Pending*>(user);
      Bench* b = pending->bench;
      if (*error != 0) {
        ++b->failed_;
        b->error_ = std::to_string(*error);
      } else {
        b->samples_.push_back(static_cast<std::uint64_t>(b->clock_.now() - pending->started));
      }
      return 1;  // retire the command
    };
    cb.user_data = p;
    cb.free = [](void* user) { delete static_cast<Pending*>(user); };
    const std::int64_t cookie =
        write ? nbd_aio_pwrite(h_, buffer_.data(), o_.block, offset, cb, o_.fua ? LIBNBD_CMD_FLAG_FUA : 0)
              : nbd_aio_pread(h_, buffer_.data(), o_.block, offset, cb, 0);
    if (cookie == -1) throw std::runtime_error(std::string("libnbd: ") + nbd_get_error());
  }

  const Options& o_;
  nbd_handle* h_;
  std::mt19937_64 rng_;
  std::vector<char> buffer_;  // shared by all requests: the bytes do not matter
  std::uint64_t span_ = 0, slots_ = 0, next_ = 0;
  MonotonicClock clock_;
  std::vector<std::uint64_t> samples_;  // every latency, ns: percentiles are exact
  Nanos elapsed_ = 0;
  int failed_ = 0;
  std::string error_;
};

int bench_main(Options& o) {
  o.sequential = o.pattern == "sequential";
  if (o.uri.empty()) throw UsageError("nvj bench: which export? (nvj bench URI)");
  const ServerAddress server = [&o] {
    try {
      return ServerAddress::parse(o.uri, o.tls);
    } catch (const std::invalid_argument& e) {  // the address or its TLS options
      throw UsageError(std::string("nvj bench: ") + e.what());
    }
  }();
  const NbdHandle h = server.connect(server.export_name());
  const std::int64_t size = nbd_get_size(h.get());
  if (size < 0) throw std::runtime_error(std::string("nbd_get_size: ") + nbd_get_error());
  Bench bench(o, h.get(), static_cast<std::uint64_t>(size));
  bench.run();
  bench.print(o.uri);
  nbd_shutdown(h.get(), 0);
  return 0;
}

}  // namespace

CommandRun declare_bench(Command& app) {
  auto o = std::make_shared<Options>();
  app.describe(kBenchText);
  app.add("URI", o->uri,
                 "an NBD URI, e.g. nbd+unix:///journal?socket=S, nbd://HOST:PORT/journal, or with TLS "
                 "nbds://HOST:PORT/journal and --tls-psk");
  app.count("--depth", o->depth, 1, 256, "requests in flight (default 1)");
  app.size("--block-size", o->block, 1, 32u << 20, "bytes per request (default 4K)");
  app.count("--write-percent", o->write_percent, 0, 100, "share of writes, 0 to 100 (default 100)")
      .value_name("P");
  app.choice("--pattern", o->pattern, {"random", "sequential"}, "random (default) or sequential");
  app.size("--span", o->span, 0, ~std::uint64_t{0}, "bytes of the export to use, from --offset (default all)");
  app.size("--offset", o->offset, 0, ~std::uint64_t{0}, "where the span starts (default 0)");
  app.count("--duration", o->seconds, 1, 3600, "how long to measure (default 10)").value_name("SECONDS");
  app.flag("--fua", o->fua, "writes with FUA");
  app.flag("--busy-poll", o->busy_poll,
               "poll without sleeping: the client's own wake-up from sleep stays out of the latencies (costs a core)");
  app.count("--seed", o->seed, 0, ~std::uint64_t{0}, "seed of the offsets and the mix (default 1)");
  app.flag("--json", o->json, "one JSON object instead of text");
  add_tls_options(app, o->tls, "an nbds:// URI");
  return [o] { return bench_main(*o); };
}

}  // namespace nvj::cli
