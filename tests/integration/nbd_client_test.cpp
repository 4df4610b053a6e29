// SPDX-License-Identifier: BSD-3-Clause
// The plugin under the real nbdkit, driven by libnbd: every NBD command on
// both exports, multi-conn with concurrent clients, persistence across
// kill -9, and the server's exit status (clean, also under ASan).
#include <catch2/catch.hpp>

#include <libnbd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

#include "common/clock.h"
#include "server_fixture.h"
#include "tools/nvj/client/server_address.h"
#include "tools/nvj/host/files/text_file.h"

namespace nbd_client_test {

using nvj::test::connect;
using nvj::test::start_server;
using nvj::test::TempDir;

namespace {

std::vector<char> pattern(std::size_t n, unsigned seed) {
  std::vector<char> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<char>((i * 131 + seed * 7919 + (i >> 12)) & 0xFF);
  return v;
}

#define NBD_OK(call) REQUIRE_MESSAGE((call) != -1, nbd_get_error())
#define REQUIRE_MESSAGE(cond, msg) \
  do {                             \
    INFO(msg);                     \
    REQUIRE(cond);                 \
  } while (0)

struct Status {
  std::uint64_t offset;
  std::uint64_t length;
  std::uint32_t flags;
};

// The base:allocation map of [offset, offset + count) as the server reports it.
std::vector<Status> block_status(nbd_handle* h, std::uint64_t offset, std::uint64_t count) {
  std::vector<Status> out;
  std::uint64_t pos = offset;
  while (pos < offset + count) {
    std::vector<Status> batch;
    nbd_extent_callback cb{};
    cb.user_data = &batch;
    cb.callback = [](void* user, const char* context, std::uint64_t at, std::uint32_t* entries, std::size_t n,
                     int*) {
      if (std::string(context) != LIBNBD_CONTEXT_BASE_ALLOCATION) return 0;
      auto* b = static_cast<std::vector<Status>*>(user);
      for (std::size_t i = 0; i + 1 < n; i += 2) {
        b->push_back({at, entries[i], entries[i + 1]});
        at += entries[i];
      }
      return 0;
    };
    NBD_OK(nbd_block_status(h, offset + count - pos, pos, cb, 0));
    REQUIRE_FALSE(batch.empty());
    for (auto& s : batch) {
      s.length = std::min(s.length, offset + count - s.offset);
      pos = s.offset + s.length;
      out.push_back(s);
      if (pos >= offset + count) break;
    }
  }
  return out;
}

// Is every byte of [offset, offset + count) reported with these flags?
bool all_flagged(nbd_handle* h, std::uint64_t offset, std::uint64_t count, std::uint32_t flags) {
  for (const auto& s : block_status(h, offset, count))
    if (s.flags != flags) return false;
  return true;
}

}  // namespace

TEST_CASE("the server lists data and journal and data is the default export", "[nbd]") {
  TempDir dir;
  auto server = start_server(dir.path, {});
  const auto exports = nvj::cli::ServerAddress::parse(server->socket()).list_exports();
  REQUIRE(exports.size() == 2);
  // The defaults: a spinning data disk with a write cache, an NVRAM journal.
  CHECK(exports[0].name == "data");
  CHECK_THAT(exports[0].description,
             Catch::StartsWith("data: 1 GiB, sparse memory, durable after flush or FUA, hdd: 7200 rpm"));
  CHECK(exports[1].name == "journal");
  CHECK_THAT(exports[1].description,
             Catch::StartsWith("journal: 64 MiB, sparse memory, durable on acknowledgement, nvram: write 2 us"));

  {
    auto def = connect(*server, "");
    CHECK(nbd_get_size(def.get()) == 1ll << 30);
    auto journal = connect(*server, "journal");
    CHECK(nbd_get_size(journal.get()) == 64ll << 20);
    nvj::test::Handle bad(nbd_create(), &nbd_close);
    CHECK(nbd_connect_uri(bad.get(), server->uri("nosuch").c_str()) == -1);
    CHECK_THAT(nbd_get_error(), Catch::Contains("server has no export named 'nosuch'"));
  }
  // Clients gone: nbdkit exits cleanly on SIGTERM (with clients connected it
  // waits for them).
  CHECK(server->stop() == 0);
}

TEST_CASE("every NBD command works on both exports and is advertised", "[nbd]") {
  TempDir dir;
  // Both exports with a write cache: flush and FUA offered on each.
  auto server = start_server(dir.path, {"data=256M", "journal=16M", "data-model=none", "journal-model=none", "fs=none",
                                        "journal-write-cache=write-back"});
  for (const char* name : {"data", "journal"}) {
    SECTION(name) {
      auto h = connect(*server, name);
      nbd_handle* hp = h.get();
      CHECK(nbd_can_flush(hp) == 1);
      CHECK(nbd_can_fua(hp) == 1);
      CHECK(nbd_can_trim(hp) == 1);
      CHECK(nbd_can_zero(hp) == 1);
      CHECK(nbd_can_multi_conn(hp) == 1);
      CHECK(nbd_is_read_only(hp) == 0);
      CHECK(nbd_can_meta_context(hp, LIBNBD_CONTEXT_BASE_ALLOCATION) == 1);
      CHECK(nbd_get_block_size(hp, LIBNBD_SIZE_MINIMUM) == 512);
      CHECK(nbd_get_block_size(hp, LIBNBD_SIZE_PREFERRED) == 4096);
      CHECK(nbd_get_block_size(hp, LIBNBD_SIZE_MAXIMUM) == 32 << 20);
      const auto size = static_cast<std::uint64_t>(nbd_get_size(hp));

      // A fresh export is one hole that reads as zeroes.
      CHECK(all_flagged(hp, 0, size, LIBNBD_STATE_HOLE | LIBNBD_STATE_ZERO));
      std::vector<char> back(1 << 20);
      NBD_OK(nbd_pread(hp, back.data(), back.size(), 3 << 20, 0));
      CHECK(std::all_of(back.begin(), back.end(), [](char c) { return c == 0; }));

      // Plain, FUA and unaligned writes read back.
      const auto a = pattern(1 << 20, 1);
      NBD_OK(nbd_pwrite(hp, a.data(), a.size(), 1 << 20, 0));
      const auto b = pattern(12345, 2);
      NBD_OK(nbd_pwrite(hp, b.data(), b.size(), (4 << 20) + 77, LIBNBD_CMD_FLAG_FUA));
      NBD_OK(nbd_flush(hp, 0));
      NBD_OK(nbd_pread(hp, back.data(), a.size(), 1 << 20, 0));
      CHECK(back == a);
      std::vector<char> back_b(b.size());
      NBD_OK(nbd_pread(hp, back_b.data(), b.size(), (4 << 20) + 77, 0));
      CHECK(back_b == b);
      CHECK(all_flagged(hp, 1 << 20, 1 << 20, 0));

      // Trim and zero leave zeroes and holes behind.
      NBD_OK(nbd_trim(hp, 256 << 10, (1 << 20) + (256 << 10), 0));
      NBD_OK(nbd_zero(hp, 128 << 10, (1 << 20) + (768 << 10), LIBNBD_CMD_FLAG_FUA));
      NBD_OK(nbd_pread(hp, back.data(), a.size(), 1 << 20, 0));
      for (std::size_t i = 0; i < a.size(); ++i) {
        const bool cleared = (i >= (256u << 10) && i < (512u << 10)) || (i >= (768u << 10) && i < (896u << 10));
        REQUIRE(back[i] == (cleared ? 0 : a[i]));
      }
      CHECK(all_flagged(hp, (1 << 20) + (256 << 10), 256 << 10, LIBNBD_STATE_HOLE | LIBNBD_STATE_ZERO));
      CHECK(all_flagged(hp, (1 << 20) + (768 << 10), 128 << 10, LIBNBD_STATE_HOLE | LIBNBD_STATE_ZERO));
      CHECK(all_flagged(hp, (1 << 20), 256 << 10, 0));

      // The last byte of the export is writable; one past it is refused.
      NBD_OK(nbd_pwrite(hp, "x", 1, size - 1, 0));
      CHECK(nbd_pwrite(hp, "x", 1, size, 0) == -1);
    }
  }
  CHECK(server->stop() == 0);
}

TEST_CASE("each export tells its clients what its model's device would; a write-through one refuses flush", "[nbd]") {
  TempDir dir;
  auto server = start_server(dir.path, {"data=256M", "journal=16M", "fs=none"});  // hdd and nvram
  auto data = connect(*server, "data");
  CHECK(nbd_is_rotational(data.get()) == 1);
  CHECK(nbd_can_flush(data.get()) == 1);
  CHECK(nbd_can_fua(data.get()) == 1);
  CHECK(nbd_can_trim(data.get()) == 0);
  CHECK(nbd_get_block_size(data.get(), LIBNBD_SIZE_MINIMUM) == 512);
  CHECK(nbd_get_block_size(data.get(), LIBNBD_SIZE_PREFERRED) == 4096);
  auto journal = connect(*server, "journal");
  CHECK(nbd_is_rotational(journal.get()) == 0);
  CHECK(nbd_can_flush(journal.get()) == 0);
  CHECK(nbd_can_fua(journal.get()) == 0);
  CHECK(nbd_can_trim(journal.get()) == 0);
  CHECK(nbd_get_block_size(journal.get(), LIBNBD_SIZE_PREFERRED) == 512);

  // A client that sends a flush and a FUA write anyway (libnbd, told not to
  // check): nbdkit refuses both with EINVAL, and what is stored stays.
  const auto kept = pattern(4096, 7);
  NBD_OK(nbd_pwrite(journal.get(), kept.data(), kept.size(), 8192, 0));
  nbd_set_strict_mode(journal.get(), 0);
  CHECK(nbd_flush(journal.get(), 0) == -1);
  CHECK(nbd_get_errno() == EINVAL);
  const auto other = pattern(4096, 8);
  CHECK(nbd_pwrite(journal.get(), other.data(), other.size(), 8192, LIBNBD_CMD_FLAG_FUA) == -1);
  CHECK(nbd_get_errno() == EINVAL);
  std::vector<char> back(kept.size());
  NBD_OK(nbd_pread(journal.get(), back.data(), back.size(), 8192, 0));
  CHECK(back == kept);
  CHECK(server->stop() == 0);
}

TEST_CASE("multi-conn: concurrent clients with many requests in flight see each other's writes after a flush",
          "[nbd]") {
  TempDir dir;
  // Both exports with a write cache: flush and FUA offered on each.
  auto server = start_server(dir.path, {"data=256M", "journal=16M", "data-model=none", "journal-model=none", "fs=none",
                                        "journal-write-cache=write-back"});
  constexpr int kClients = 4;
  constexpr int kInFlight = 16;
  constexpr int kWritesEach = 512;
  constexpr std::size_t kBlock = 4096;
  for (const char* name : {"data", "journal"}) {
    std::atomic<int> failures{0};
    std::vector<std::thread> clients;
    for (int c = 0; c < kClients; ++c)
      clients.emplace_back([&, c] {
        nvj::test::Handle h(nullptr, &nbd_close);
        try {
          h = connect(*server, name);
        } catch (const std::exception&) {
          ++failures;
          return;
        }
        // Interleaved blocks: client c owns every kClients-th block.
        std::vector<std::vector<char>> bufs;
        for (int i = 0; i < kWritesEach; ++i) bufs.push_back(pattern(kBlock, static_cast<unsigned>(c * 100000 + i)));
        int next = 0;
        while (next < kWritesEach || nbd_aio_in_flight(h.get()) > 0) {
          while (next < kWritesEach && nbd_aio_in_flight(h.get()) < kInFlight) {
            const auto offset = static_cast<std::uint64_t>(next * kClients + c) * kBlock;
            // No completion callback: a value-initialised one, as libnbd's
            // NBD_NULL_COMPLETION (a C compound literal) in C++.
            if (nbd_aio_pwrite(h.get(), bufs[static_cast<std::size_t>(next)].data(), kBlock, offset,
                               nbd_completion_callback{}, 0) == -1)
              ++failures;
            ++next;
          }
          if (nbd_poll(h.get(), -1) == -1) ++failures;
          int64_t cookie = 0;
          while ((cookie = nbd_aio_peek_command_completed(h.get())) > 0)
            if (nbd_aio_command_completed(h.get(), static_cast<uint64_t>(cookie)) == -1) ++failures;
        }
      });
    for (auto& t : clients) t.join();
    REQUIRE(failures == 0);

    // One flush on a new connection covers every connection (multi-conn).
    auto reader = connect(*server, name);
    NBD_OK(nbd_flush(reader.get(), 0));
    std::vector<char> back(kBlock);
    for (int c = 0; c < kClients; ++c)
      for (int i = 0; i < kWritesEach; ++i) {
        NBD_OK(nbd_pread(reader.get(), back.data(), kBlock, static_cast<std::uint64_t>(i * kClients + c) * kBlock, 0));
        REQUIRE(back == pattern(kBlock, static_cast<unsigned>(c * 100000 + i)));
      }
  }
  CHECK(server->stop() == 0);
}

TEST_CASE("file-backed exports keep every flushed data byte and every acknowledged journal byte across kill -9",
          "[nbd][persistence]") {
  TempDir dir;
  const std::vector<std::string> params{"data=64M", "journal=8M", "data-file=" + dir.file("data.img"),
                                        "journal-file=" + dir.file("journal.img"), "data-model=none", "fs=none"};
  const auto flushed = pattern(1 << 20, 11);
  const auto fua = pattern(8192, 12);
  const auto journal_bytes = pattern(3 << 20, 13);
  {
    auto server = start_server(dir.path / "run1", params);
    auto data = connect(*server, "data");
    auto journal = connect(*server, "journal");
    NBD_OK(nbd_pwrite(data.get(), flushed.data(), flushed.size(), 5 << 20, 0));
    NBD_OK(nbd_flush(data.get(), 0));
    NBD_OK(nbd_pwrite(data.get(), fua.data(), fua.size(), 40 << 20, LIBNBD_CMD_FLAG_FUA));
    // The journal is NVRAM: no flush needed.
    NBD_OK(nbd_pwrite(journal.get(), journal_bytes.data(), journal_bytes.size(), 1 << 20, 0));
    server->kill_hard();
  }
  // Restarted on the same files, with no sizes: the files' own are served.
  auto server = start_server(dir.path / "run2", {"data-file=" + dir.file("data.img"),
                                                 "journal-file=" + dir.file("journal.img"), "fs=none"});
  {
  auto data = connect(*server, "data");
  auto journal = connect(*server, "journal");
  CHECK(nbd_get_size(data.get()) == 64 << 20);
  CHECK(nbd_get_size(journal.get()) == 8 << 20);
  std::vector<char> back(flushed.size());
  NBD_OK(nbd_pread(data.get(), back.data(), flushed.size(), 5 << 20, 0));
  CHECK(back == flushed);
  std::vector<char> back_fua(fua.size());
  NBD_OK(nbd_pread(data.get(), back_fua.data(), fua.size(), 40 << 20, 0));
  CHECK(back_fua == fua);
  std::vector<char> back_journal(journal_bytes.size());
  NBD_OK(nbd_pread(journal.get(), back_journal.data(), journal_bytes.size(), 1 << 20, 0));
  CHECK(back_journal == journal_bytes);
  // Still sparse on disk: only what was written is allocated.
  CHECK(all_flagged(data.get(), 0, 5 << 20, LIBNBD_STATE_HOLE | LIBNBD_STATE_ZERO));
  }
  CHECK(server->stop() == 0);
}

TEST_CASE("the plugin works under nbdkit's stock filters cow and stats and log", "[nbd][filters]") {
  TempDir dir;
  const std::string stats = dir.file("stats.txt");
  const std::string log = dir.file("requests.log");
  // Filter parameters go with the plugin's, after it.
  auto server = start_server(dir.path / "run", {"data=64M", "journal=8M", "statsfile=" + stats, "logfile=" + log,
                                                "journal-model=none"},
                             {"--filter=log", "--filter=stats", "--filter=cow"});
  const auto data = pattern(1 << 20, 21);
  {
    auto h = connect(*server, "journal");
    CHECK(nbd_get_size(h.get()) == 8 << 20);
    NBD_OK(nbd_pwrite(h.get(), data.data(), data.size(), 4096, 0));
    NBD_OK(nbd_flush(h.get(), 0));
    std::vector<char> back(data.size());
    NBD_OK(nbd_pread(h.get(), back.data(), back.size(), 4096, 0));
    CHECK(back == data);
  }
  CHECK(server->stop() == 0);
  CHECK_THAT(nvj::cli::read_text_file(stats), Catch::Contains("read:") && Catch::Contains("write:"));
  const std::string log_text = nvj::cli::read_text_file(log);
  CHECK_THAT(log_text, Catch::Contains("Connect export=journal"));
  CHECK_THAT(log_text, Catch::Contains("Write"));
}

TEST_CASE("a request is answered no earlier than its model says", "[nbd][model]") {
  // A lower bound only: how much later is a benchmark's business (bench/).
  TempDir dir;
  auto server = start_server(dir.path, {"data=64M", "journal=8M", "journal-model=nvram:latency=30ms,bandwidth=0",
                                        "data-model=hdd:cache=off"});
  {
    auto journal = connect(*server, "journal");
    auto data = connect(*server, "data");
    const auto block = pattern(4096, 5);
    nvj::MonotonicClock clock;
    for (int i = 0; i < 3; ++i) {
      const nvj::Nanos start = clock.now();
      NBD_OK(nbd_pwrite(journal.get(), block.data(), block.size(), static_cast<std::uint64_t>(i) * 4096, 0));
      CHECK(clock.now() - start >= 30 * nvj::kMilli);
    }
    // Cache off: a write to the disk waits at least for the command overhead
    // and the transfer at the inner rate; a seek across the disk for more.
    const nvj::Nanos start = clock.now();
    NBD_OK(nbd_pwrite(data.get(), block.data(), block.size(), (64 << 20) - 4096, 0));
    CHECK(clock.now() - start >= 50 * nvj::kMicro);
  }
  CHECK(server->stop() == 0);
}

}  // namespace nbd_client_test
