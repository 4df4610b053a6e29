// SPDX-License-Identifier: BSD-3-Clause
// xfs_log_replay: writes an XFS log to an NBD export, one write per log
// record (split in two where it wraps past the end, as the kernel splits
// it), with DEPTH requests in flight, so that a server tracing the export
// decodes real XFS log records.
//
// Usage: xfs_log_replay URI [--depth N] [--seconds S | --writes N]
//                           [--log-buffer-kib K] [--seed N]
//
// The log is the whole export. Records are laid out by fscore's record
// builder as xlog_sync lays them out: log buffers of K KiB (32, the
// kernel's default logbsize, unless told), 1 to K/512 data blocks of
// random bytes, 1 to 200 operations, the tail a quarter of the log behind; every
// write FUA when the server offers it, as the kernel writes a synchronous
// commit's record. Two wraps of the log make a session; then, once every
// write has completed, the next starts over at block 0 (a fresh log: a new
// mkfs and mount; the kernel never writes over a record still in flight). It stops after S
// seconds or after exactly N writes, waiting for the writes in flight, and
// prints one line:
//   writes N seconds S iops X
#include <libnbd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "tests/support/xfs_record_builder.h"

namespace {

using namespace fscore::xfs;

[[noreturn]] void usage(int code) {
  std::fputs(
      "Usage: xfs_log_replay URI [--depth N] [--seconds S | --writes N]\n"
      "                          [--log-buffer-kib K] [--seed N]\n",
      code == 0 ? stdout : stderr);
  std::exit(code);
}

[[noreturn]] void die(const std::string& what) {
  std::fprintf(stderr, "xfs_log_replay: %s\n", what.c_str());
  std::exit(1);
}

struct State {
  nbd_handle* h = nullptr;
  std::uint64_t completed = 0;
  int failed = 0;
};

int on_done(void* user, int* error) {
  auto* s = static_cast<State*>(user);
  if (*error != 0) ++s->failed;
  ++s->completed;
  return 1;  // retire the command
}

void poll_once(State& st) {
  if (nbd_poll(st.h, -1) == -1) die(std::string("nbd_poll: ") + nbd_get_error());
  if (st.failed != 0) die("a write failed");
}

struct LogWriteSpan {
  std::uint64_t offset;
  std::size_t arena, length;
};

}  // namespace

int main(int argc, char** argv) {
  std::string uri;
  int depth = 16;
  double seconds = 0;
  std::uint64_t writes = 0, seed = 20261124;
  std::uint32_t buffer_kib = 32;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "-h" || a == "--help") usage(0);
    if (a.rfind("-", 0) != 0) {
      if (!uri.empty()) usage(2);
      uri = a;
      continue;
    }
    if (i + 1 >= argc) usage(2);
    const char* v = argv[++i];
    if (a == "--depth") depth = std::atoi(v);
    else if (a == "--seconds") seconds = std::strtod(v, nullptr);
    else if (a == "--writes") writes = std::strtoull(v, nullptr, 10);
    else if (a == "--log-buffer-kib") buffer_kib = static_cast<std::uint32_t>(std::strtoul(v, nullptr, 10));
    else if (a == "--seed") seed = std::strtoull(v, nullptr, 10);
    else usage(2);
  }
  if (uri.empty() || depth < 1 || depth > 256 || (seconds <= 0) == (writes == 0) || buffer_kib < 16 ||
      buffer_kib > 256)
    usage(2);

  State st;
  st.h = nbd_create();
  if (st.h == nullptr || nbd_connect_uri(st.h, uri.c_str()) == -1) die(std::string("connect: ") + nbd_get_error());
  const std::int64_t size = nbd_get_size(st.h);
  if (size < 0) die(std::string("size: ") + nbd_get_error());
  const bool fua = nbd_can_fua(st.h) == 1;
  const std::uint64_t log_blocks = static_cast<std::uint64_t>(size) / kBasicBlock;
  // Header blocks: one per 32 KiB of the log buffer; the rest holds data.
  const std::uint64_t max_data = buffer_kib * 1024 / kBasicBlock - (buffer_kib + 31) / 32;
  if (log_blocks < 4u * (max_data + 8)) die("the export is too small for a log");

  // A session: two wraps of the log.
  std::vector<std::uint8_t> arena;
  std::vector<LogWriteSpan> session;
  std::mt19937_64 rng(seed);
  std::vector<std::uint8_t> data;
  std::uint32_t cycle = 1, block = 0;
  for (std::uint64_t written = 0; written < 2 * log_blocks;) {
    data.resize((1 + rng() % max_data) * kBasicBlock - rng() % kBasicBlock);
    for (auto& b : data) b = static_cast<std::uint8_t>(rng());
    RecordSpec spec;
    spec.cycle = cycle;
    spec.block = block;
    // The tail a quarter of the log behind (at the start while the log is new).
    const std::uint64_t behind = log_blocks / 4;
    if (block >= behind) spec.tail = {cycle, static_cast<std::uint32_t>(block - behind)};
    else if (cycle > 1) spec.tail = {cycle - 1, static_cast<std::uint32_t>(block + log_blocks - behind)};
    else spec.tail = {1, 0};
    spec.operations = 1 + static_cast<std::uint32_t>(rng() % 200);
    spec.size = buffer_kib * 1024;
    const std::vector<std::uint8_t> r = build_record(spec, data, log_blocks);
    const std::size_t at = arena.size();
    arena.insert(arena.end(), r.begin(), r.end());
    const std::uint64_t n = r.size() / kBasicBlock;
    const std::uint64_t first = std::min<std::uint64_t>(n, log_blocks - block);
    session.push_back({std::uint64_t{block} * kBasicBlock, at, first * kBasicBlock});
    if (first < n) session.push_back({0, at + first * kBasicBlock, (n - first) * kBasicBlock});
    written += n;
    block += static_cast<std::uint32_t>(n);
    if (block >= log_blocks) {
      block -= static_cast<std::uint32_t>(log_blocks);
      ++cycle;
    }
  }
  std::fprintf(stderr, "xfs_log_replay: %llu basic blocks, %u KiB log buffers; session of %zu writes (%.0f MiB); depth %d\n",
               static_cast<unsigned long long>(log_blocks), buffer_kib, session.size(),
               static_cast<double>(arena.size()) / (1 << 20), depth);

  nbd_completion_callback cb{};
  cb.callback = on_done;
  cb.user_data = &st;
  const auto start = std::chrono::steady_clock::now();
  const auto deadline = start + std::chrono::duration<double>(seconds);
  std::uint64_t issued = 0;
  std::size_t next = 0;
  auto more = [&] {
    if (writes != 0) return issued < writes;
    return (issued & 63) != 0 || std::chrono::steady_clock::now() < deadline;
  };
  while (more()) {
    const LogWriteSpan& w = session[next];
    next = next + 1 == session.size() ? 0 : next + 1;
    if (next == 1)
      while (nbd_aio_in_flight(st.h) > 0) poll_once(st);
    while (nbd_aio_in_flight(st.h) >= depth) poll_once(st);
    if (nbd_aio_pwrite(st.h, arena.data() + w.arena, w.length, w.offset, cb, fua ? LIBNBD_CMD_FLAG_FUA : 0) == -1)
      die(std::string("write: ") + nbd_get_error());
    ++issued;
  }
  while (nbd_aio_in_flight(st.h) > 0) poll_once(st);
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  nbd_shutdown(st.h, 0);
  nbd_close(st.h);
  std::printf("writes %llu seconds %.3f iops %.0f\n", static_cast<unsigned long long>(st.completed), elapsed,
              static_cast<double>(st.completed) / elapsed);
  return 0;
}
