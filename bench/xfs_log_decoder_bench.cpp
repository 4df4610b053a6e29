// SPDX-License-Identifier: BSD-3-Clause
// xfs_log_decoder_bench: how fast fscore::xfs::LogFollower follows an XFS
// log on one thread, against the unavoidable cost of touching the same bytes
// once: a crc32c pass and a memcpy into the log.
//
// Usage: xfs_log_decoder_bench [--log-mib N] [--wraps W] [--seconds S]
//                              [--rounds R] [--piece-kib K] [--seed N]
//
// The log (N MiB, 256 KiB log buffers as `mount -o logbsize=256k` makes them)
// is written W times over by records of random length (1 to 512 basic
// blocks of data, as a busy or an idle log writes them; 1 to 200
// operations), built in memory before any timing by fscore's record builder
// as the kernel's xlog_sync lays them out. Each measurement feeds those
// writes, in order, to a fresh follower for at least S seconds (the session
// again and again), as one write per record (split in two where it wraps, as
// the kernel splits it) or cut into pieces of at most K KiB (a transport's
// largest request); the peers run over the same writes. Only the loop over
// the writes is timed; it also points the follower's BlockSource at each
// write's bytes (per basic block), as a store would hold them.
//
// Output: one line per measurement, tab-separated:
//   round variant bytes seconds records check
// where check is "ok" when the follower found every record of every session
// whole, its CRC good, and no problem ("-" for the peers); then a summary on
// stderr.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "fscore/block_io.h"
#include "fscore/crc32c.h"
#include "fscore/xfs/log_follower.h"
#include "tests/support/xfs_record_builder.h"

namespace {

using namespace fscore::xfs;
using Clock = std::chrono::steady_clock;

// The log as the follower reads it back: per basic block, the bytes last
// written there (in the session's arena).
class PointerSource final : public fscore::BlockSource {
 public:
  explicit PointerSource(std::uint64_t blocks) : blocks_(blocks, zero_.data()) {}
  std::uint64_t size() const override { return blocks_.size() * kBasicBlock; }
  void read(std::uint64_t offset, std::span<std::uint8_t> bytes) const override {
    if (offset > size() || bytes.size() > size() - offset) throw std::out_of_range("read past the log");
    for (std::size_t done = 0; done < bytes.size();) {
      const std::uint64_t at = offset + done;
      const std::size_t within = at % kBasicBlock;
      const std::size_t n = std::min(bytes.size() - done, kBasicBlock - within);
      std::memcpy(bytes.data() + done, blocks_[at / kBasicBlock] + within, n);
      done += n;
    }
  }
  void point(std::uint64_t offset, const std::uint8_t* bytes, std::size_t length) {
    for (std::size_t i = 0; i < length / kBasicBlock; ++i) blocks_[offset / kBasicBlock + i] = bytes + i * kBasicBlock;
  }

 private:
  std::array<std::uint8_t, kBasicBlock> zero_{};
  std::vector<const std::uint8_t*> blocks_;
};

struct Write {
  std::uint64_t offset;  // in the log
  std::size_t arena;     // where its bytes are
  std::size_t length;
};

struct Session {
  std::vector<std::uint8_t> arena;  // every record, one after the other
  std::vector<Write> whole;         // one write per record, two where it wraps
  std::uint64_t records = 0;
  std::uint64_t operations = 0;
  std::uint64_t bytes = 0;
};

Session build_session(std::uint64_t log_blocks, double wraps, std::uint64_t seed) {
  Session s;
  std::mt19937_64 rng(seed);
  std::uint32_t cycle = 1, block = 0;
  const std::uint64_t total = static_cast<std::uint64_t>(wraps * static_cast<double>(log_blocks));
  std::vector<std::uint8_t> data;
  for (std::uint64_t written = 0; written < total;) {
    const std::uint32_t data_blocks = 1 + static_cast<std::uint32_t>(rng() % 512);
    data.resize(std::size_t{data_blocks} * kBasicBlock - rng() % kBasicBlock);
    for (auto& b : data) b = static_cast<std::uint8_t>(rng());
    RecordSpec spec;
    spec.cycle = cycle;
    spec.block = block;
    spec.tail = {cycle > 1 ? cycle - 1 : 1, block};
    spec.operations = 1 + static_cast<std::uint32_t>(rng() % 200);
    spec.size = kMaxLogBuffer;
    const std::vector<std::uint8_t> r = build_record(spec, data, log_blocks);
    const std::size_t at = s.arena.size();
    s.arena.insert(s.arena.end(), r.begin(), r.end());
    const std::uint64_t n = r.size() / kBasicBlock;
    const std::uint64_t first = std::min<std::uint64_t>(n, log_blocks - block);
    s.whole.push_back({std::uint64_t{block} * kBasicBlock, at, first * kBasicBlock});
    if (first < n) s.whole.push_back({0, at + first * kBasicBlock, (n - first) * kBasicBlock});
    ++s.records;
    s.operations += spec.operations;
    s.bytes += r.size();
    written += n;
    block += static_cast<std::uint32_t>(n);
    if (block >= log_blocks) {
      block -= static_cast<std::uint32_t>(log_blocks);
      ++cycle;
    }
  }
  return s;
}

std::vector<Write> cut(const std::vector<Write>& whole, std::size_t piece) {
  std::vector<Write> out;
  for (const Write& w : whole)
    for (std::size_t done = 0; done < w.length; done += piece)
      out.push_back({w.offset + done, w.arena + done, std::min(piece, w.length - done)});
  return out;
}

struct Result {
  std::uint64_t bytes = 0;
  double seconds = 0;
  std::uint64_t records = 0;
  std::string check;
};

struct Bench {
  Session session;
  std::vector<Write> pieces;
  std::uint64_t log_blocks;
  std::vector<std::uint8_t> image;
  double min_seconds;
  volatile std::uint32_t sink = 0;

  template <typename Body>
  Result timed(const std::vector<Write>& writes, Body body) {
    std::uint64_t passes = 0;
    const auto start = Clock::now();
    double elapsed = 0;
    do {
      for (const Write& w : writes) body(w);
      ++passes;
      elapsed = std::chrono::duration<double>(Clock::now() - start).count();
    } while (elapsed < min_seconds);
    return {passes * session.bytes, elapsed, passes * session.records, "-"};
  }

  Result follow(const std::vector<Write>& writes) {
    PointerSource source(log_blocks);
    struct Problems final : FollowerEvents {
      std::uint64_t count = 0;
      std::string first;
      void on_problem(const std::string& p) override {
        if (count++ == 0) first = p;
      }
    } events;
    LogFollower follower(source, log_blocks, events);
    const std::uint8_t* arena = session.arena.data();
    Nanos now = 0;
    Result r = timed(writes, [&](const Write& w) {
      source.point(w.offset, arena + w.arena, w.length);
      now += 1000;
      follower.write({w.offset, std::span(arena + w.arena, w.length), true, now, now + 500});
    });
    const FollowerTotals& t = follower.totals();
    std::string why;
    if (events.count != 0) why = std::to_string(events.count) + " problems, first: " + events.first;
    else if (t.records != r.records) why = "records " + std::to_string(t.records) + " of " + std::to_string(r.records);
    else if (t.crc_ok != r.records) why = "good CRCs " + std::to_string(t.crc_ok);
    else if (t.record_bytes != r.bytes) why = "record bytes " + std::to_string(t.record_bytes);
    r.check = why.empty() ? "ok" : "FAILED(" + why + ")";
    return r;
  }

  Result crc(const std::vector<Write>& writes) {
    std::uint32_t acc = 0;
    const std::uint8_t* arena = session.arena.data();
    Result r = timed(writes, [&](const Write& w) { acc ^= fscore::crc32c(~0u, arena + w.arena, w.length); });
    sink = acc;
    r.records = 0;
    return r;
  }

  Result copy(const std::vector<Write>& writes) {
    const std::uint8_t* arena = session.arena.data();
    std::uint8_t* dst = image.data();
    Result r = timed(writes, [&](const Write& w) { std::memcpy(dst + w.offset, arena + w.arena, w.length); });
    sink = image[r.bytes % image.size()];
    r.records = 0;
    return r;
  }
};

[[noreturn]] void usage(int code) {
  std::fputs(
      "Usage: xfs_log_decoder_bench [--log-mib N] [--wraps W] [--seconds S]\n"
      "                             [--rounds R] [--piece-kib K] [--seed N]\n",
      code == 0 ? stdout : stderr);
  std::exit(code);
}

}  // namespace

int main(int argc, char** argv) {
  std::uint32_t log_mib = 64, piece_kib = 128, rounds = 5;
  double seconds = 1.0, wraps = 4;
  std::uint64_t seed = 20261124;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "-h" || a == "--help") usage(0);
    if (i + 1 >= argc) usage(2);
    const char* v = argv[++i];
    if (a == "--log-mib") log_mib = static_cast<std::uint32_t>(std::strtoul(v, nullptr, 10));
    else if (a == "--wraps") wraps = std::strtod(v, nullptr);
    else if (a == "--seconds") seconds = std::strtod(v, nullptr);
    else if (a == "--rounds") rounds = static_cast<std::uint32_t>(std::strtoul(v, nullptr, 10));
    else if (a == "--piece-kib") piece_kib = static_cast<std::uint32_t>(std::strtoul(v, nullptr, 10));
    else if (a == "--seed") seed = std::strtoull(v, nullptr, 10);
    else usage(2);
  }
  if (log_mib < 2 || wraps <= 0 || seconds <= 0 || rounds < 1 || piece_kib < 1) usage(2);

  Bench bench{};
  bench.log_blocks = std::uint64_t{log_mib} * 1024 * 1024 / kBasicBlock;
  bench.session = build_session(bench.log_blocks, wraps, seed);
  bench.pieces = cut(bench.session.whole, std::size_t{piece_kib} * 1024);
  bench.image.assign(bench.log_blocks * kBasicBlock, 0);
  bench.min_seconds = seconds;
  const Session& s = bench.session;
  std::fprintf(stderr,
               "xfs_log_decoder_bench: %u MiB log, 256 KiB log buffers; one session = %llu records (%.0f MiB, %llu "
               "operations, %.1f wraps), %zu whole writes, %zu of at most %u KiB\n",
               log_mib, static_cast<unsigned long long>(s.records), static_cast<double>(s.bytes) / (1 << 20),
               static_cast<unsigned long long>(s.operations), wraps, s.whole.size(), bench.pieces.size(), piece_kib);

  const std::string piece = std::to_string(piece_kib) + "k";
  struct Variant {
    std::string name;
    int kind;  // 0 follow, 1 crc32c, 2 memcpy
    const std::vector<Write>* writes;
  };
  const std::vector<Variant> variants{
      {"follow-record", 0, &bench.session.whole}, {"follow-" + piece, 0, &bench.pieces},
      {"crc32c-record", 1, &bench.session.whole}, {"crc32c-" + piece, 1, &bench.pieces},
      {"memcpy-record", 2, &bench.session.whole}, {"memcpy-" + piece, 2, &bench.pieces},
  };
  bool ok = true;
  for (std::uint32_t round = 1; round <= rounds; ++round) {
    for (std::size_t k = 0; k < variants.size(); ++k) {
      const Variant& v = variants[(k + round - 1) % variants.size()];
      const Result r = v.kind == 0 ? bench.follow(*v.writes) : v.kind == 1 ? bench.crc(*v.writes) : bench.copy(*v.writes);
      if (r.check != "-" && r.check != "ok") ok = false;
      std::printf("%u\t%s\t%llu\t%.6f\t%llu\t%s\n", round, v.name.c_str(), static_cast<unsigned long long>(r.bytes),
                  r.seconds, static_cast<unsigned long long>(r.records), r.check.c_str());
      std::fflush(stdout);
      std::fprintf(stderr, "  round %u  %-14s %7.3f GB/s  %s\n", round, v.name.c_str(),
                   static_cast<double>(r.bytes) / r.seconds / 1e9, r.check.c_str());
    }
  }
  return ok ? 0 : 1;
}
