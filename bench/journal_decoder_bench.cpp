// SPDX-License-Identifier: BSD-3-Clause
// journal_decoder_bench: how fast fscore::jbd2::JournalDecoder follows a
// realistic jbd2 journal on one thread, against the unavoidable cost of
// touching the same bytes once: a crc32c pass and a memcpy into the journal.
//
// Usage: journal_decoder_bench [--journal-mib N] [--wraps W] [--seconds S]
//                              [--rounds R] [--batch-kib K] [--seed N]
//                              [--only VARIANT --passes N]
//
// The journal (N MiB, 4 KiB blocks, csum v3 + 64bit as ext4 with
// metadata_csum makes it) is written W times over by a mount's worth of
// transactions (bench/journal_workload.h), all built in memory before any
// timing. Each measurement feeds those writes, in order, to a fresh decoder
// for at least S seconds (the session again and again: a remount each time),
// as one-block requests (4 KiB) or as requests of up to K KiB of consecutive
// log blocks; the peers run over the same requests. Only the loop over the
// requests is timed; it also points the decoder's BlockSource at each
// request's bytes (one store per block), as a store would hold them. The
// variants are interleaved, their order rotating from round to round.
//
// Output: one line per measurement, tab-separated:
//   round variant bytes seconds transactions check
// where check is "ok" when the decoder committed every transaction of every
// session it was fed, with the same logged, escaped and revoked counts, and
// reported no problem ("-" for the peers); then a summary on stderr.
//
// --only VARIANT --passes N runs one variant (decode-4k, crc32c-64k, ...)
// over exactly N sessions, once: under callgrind, the difference between N = 2
// and N = 1 is the instruction count of one session, independent of the
// machine's load.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench/journal_workload.h"
#include "fscore/block_io.h"
#include "fscore/crc32c.h"
#include "fscore/jbd2/journal_decoder.h"

namespace {

using namespace fscore::jbd2;
using Clock = std::chrono::steady_clock;

// The journal as the decoder reads it back: per block, the bytes last
// written there (in the session's arena), else what it held at the start.
class PointerSource final : public fscore::BlockSource {
 public:
  PointerSource(std::uint32_t block_size, std::uint32_t blocks) : bs_(block_size), blocks_(blocks, nullptr) {}
  std::uint64_t size() const override { return std::uint64_t{bs_} * blocks_.size(); }
  void read(std::uint64_t offset, std::span<std::uint8_t> bytes) const override {
    if (offset > size() || bytes.size() > size() - offset) throw std::out_of_range("read past the journal");
    std::size_t done = 0;
    while (done < bytes.size()) {
      const std::uint64_t at = offset + done;
      const std::uint64_t block = at / bs_;
      const std::size_t within = static_cast<std::size_t>(at % bs_);
      const std::size_t n = std::min<std::size_t>(bytes.size() - done, bs_ - within);
      if (blocks_[block] == nullptr) std::memset(bytes.data() + done, 0, n);
      else std::memcpy(bytes.data() + done, blocks_[block] + within, n);
      done += n;
    }
  }
  void point(std::uint64_t offset, const std::uint8_t* bytes, std::size_t length) {
    for (std::size_t k = 0; k < length; k += bs_) blocks_[(offset + k) / bs_] = bytes + k;
  }
  void clear() { std::fill(blocks_.begin(), blocks_.end(), nullptr); }

 private:
  std::uint32_t bs_;
  std::vector<const std::uint8_t*> blocks_;
};

struct Counter final : DecoderEvents {
  std::uint64_t commits = 0;
  std::uint64_t problems = 0;
  std::string first_problem;
  void on_commit(const Transaction&) override { ++commits; }
  void on_problem(const ProblemReport& p) override {
    if (problems++ == 0) first_problem = std::string(to_string(p.problem)) + ": " + p.detail;
  }
};

struct Request {
  std::uint64_t offset;
  std::uint64_t arena;
  std::uint32_t length;
  bool fua;
};

// The session's writes as requests of at most `max_bytes`: consecutive log
// blocks merge; superblock updates and the wrap end a request.
std::vector<Request> requests_of(const nvj::bench::JournalSession& s, std::uint32_t max_bytes) {
  std::vector<Request> out;
  for (const auto& w : s.writes) {
    if (!out.empty() && !w.superblock && !out.back().fua && out.back().length + s.block_size <= max_bytes &&
        out.back().offset + out.back().length == w.offset && out.back().arena + out.back().length == w.arena) {
      out.back().length += s.block_size;
      continue;
    }
    out.push_back(Request{w.offset, w.arena, s.block_size, w.superblock});
  }
  return out;
}

struct Result {
  std::uint64_t bytes = 0;
  double seconds = 0;
  std::uint64_t transactions = 0;
  std::string check = "-";
};

struct Bench {
  JournalSuperblock sb;
  std::vector<std::uint8_t> clean_sb_block;
  nvj::bench::JournalSession session;
  std::uint64_t session_bytes = 0;
  std::vector<Request> single, batched;
  PointerSource source;
  std::vector<std::uint8_t> image;  // memcpy's destination: the journal as a store holds it
  double min_seconds = 1.0;
  std::uint64_t fixed_passes = 0;  // else as many passes as fit in min_seconds
  volatile std::uint32_t sink = 0;

  Bench(const JournalSuperblock& s, const nvj::bench::SessionShape& shape, std::uint32_t batch_bytes, double secs)
      : sb(s),
        clean_sb_block(s.block_size, 0),
        session(),
        source(s.block_size, s.maxlen),
        image(std::uint64_t{s.maxlen} * s.block_size, 0),
        min_seconds(secs) {
    encode_journal_superblock(sb, std::span<std::uint8_t, kSuperblockSize>(clean_sb_block.data(), kSuperblockSize));
    session = nvj::bench::build_session(sb, 0, clean_sb_block, shape);
    single = requests_of(session, session.block_size);
    batched = requests_of(session, batch_bytes);
    session_bytes = std::uint64_t{session.block_size} * session.writes.size();
  }

  Result decode(const std::vector<Request>& reqs) {
    source.clear();
    source.point(0, clean_sb_block.data(), clean_sb_block.size());
    Counter events;
    JournalDecoder decoder(source, events, {0});
    if (!decoder.has_format()) throw std::runtime_error("the decoder does not see the journal's superblock");
    const std::uint8_t* arena = session.arena.data();
    Nanos now = 0;
    std::uint64_t passes = 0;
    const auto start = Clock::now();
    double elapsed = 0;
    do {
      for (const Request& r : reqs) {
        source.point(r.offset, arena + r.arena, r.length);
        now += 1000;
        decoder.write(LogWrite{r.offset, std::span<const std::uint8_t>(arena + r.arena, r.length), r.fua, now,
                               now + 500});
      }
      ++passes;
      elapsed = std::chrono::duration<double>(Clock::now() - start).count();
    } while (fixed_passes != 0 ? passes < fixed_passes : elapsed < min_seconds);
    Result res;
    res.bytes = passes * session_bytes;
    res.seconds = elapsed;
    res.transactions = events.commits;
    const DecoderTotals t = decoder.totals(now);
    std::string why;
    if (events.problems != 0) why = std::to_string(events.problems) + " problems, first: " + events.first_problem;
    else if (t.transactions != passes * session.transactions) why = "transactions " + std::to_string(t.transactions);
    else if (t.logged_blocks != passes * session.logged_blocks) why = "logged blocks " + std::to_string(t.logged_blocks);
    else if (t.escaped_blocks != passes * session.escaped_blocks) why = "escaped " + std::to_string(t.escaped_blocks);
    else if (t.revoked != passes * session.revoked) why = "revoked " + std::to_string(t.revoked);
    else if (t.log_bytes != passes * session.log_blocks * session.block_size) why = "log bytes";
    else if (t.checksum_errors != 0) why = "checksum errors";
    res.check = why.empty() ? "ok" : "FAILED(" + why + ")";
    return res;
  }

  Result crc(const std::vector<Request>& reqs) {
    const std::uint8_t* arena = session.arena.data();
    std::uint64_t passes = 0;
    std::uint32_t acc = 0;
    const auto start = Clock::now();
    double elapsed = 0;
    do {
      for (const Request& r : reqs) acc ^= fscore::crc32c(~0u, arena + r.arena, r.length);
      ++passes;
      elapsed = std::chrono::duration<double>(Clock::now() - start).count();
    } while (fixed_passes != 0 ? passes < fixed_passes : elapsed < min_seconds);
    sink = acc;
    return Result{passes * session_bytes, elapsed, 0, "-"};
  }

  Result copy(const std::vector<Request>& reqs) {
    const std::uint8_t* arena = session.arena.data();
    std::uint8_t* dst = image.data();
    std::uint64_t passes = 0;
    const auto start = Clock::now();
    double elapsed = 0;
    do {
      for (const Request& r : reqs) std::memcpy(dst + r.offset, arena + r.arena, r.length);
      ++passes;
      elapsed = std::chrono::duration<double>(Clock::now() - start).count();
    } while (fixed_passes != 0 ? passes < fixed_passes : elapsed < min_seconds);
    sink = image[passes % image.size()];
    return Result{passes * session_bytes, elapsed, 0, "-"};
  }
};

[[noreturn]] void usage(int code) {
  std::fputs(
      "Usage: journal_decoder_bench [--journal-mib N] [--wraps W] [--seconds S]\n"
      "                             [--rounds R] [--batch-kib K] [--seed N]\n"
      "                             [--only VARIANT --passes N]\n",
      code == 0 ? stdout : stderr);
  std::exit(code);
}

}  // namespace

int main(int argc, char** argv) {
  std::uint32_t journal_mib = 128, batch_kib = 64, rounds = 5;
  double seconds = 1.0, wraps = 4;
  std::uint64_t seed = 20240601;
  std::uint64_t passes = 0;
  std::string only;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "-h" || a == "--help") usage(0);
    if (i + 1 >= argc) usage(2);
    const char* v = argv[++i];
    if (a == "--journal-mib") journal_mib = static_cast<std::uint32_t>(std::strtoul(v, nullptr, 10));
    else if (a == "--wraps") wraps = std::strtod(v, nullptr);
    else if (a == "--seconds") seconds = std::strtod(v, nullptr);
    else if (a == "--rounds") rounds = static_cast<std::uint32_t>(std::strtoul(v, nullptr, 10));
    else if (a == "--batch-kib") batch_kib = static_cast<std::uint32_t>(std::strtoul(v, nullptr, 10));
    else if (a == "--seed") seed = std::strtoull(v, nullptr, 10);
    else if (a == "--passes") passes = std::strtoull(v, nullptr, 10);
    else if (a == "--only") only = v;
    else usage(2);
  }
  if (journal_mib < 1 || wraps <= 0 || seconds <= 0 || rounds < 1 || batch_kib < 4 || only.empty() != (passes == 0))
    usage(2);

  // What mke2fs -O metadata_csum gives an ext4 journal: 4 KiB blocks,
  // revoke + 64bit + csum v3 (crc32c).
  JournalSuperblock sb;
  sb.block_size = 4096;
  sb.maxlen = journal_mib * (1024 * 1024 / 4096);
  sb.first = 1;
  sb.sequence = 1;
  sb.start = 0;
  sb.feature_incompat = feature::kIncompatRevoke | feature::kIncompat64bit | feature::kIncompatCsumV3;
  sb.checksum_type = 4;
  for (std::size_t i = 0; i < 16; ++i) sb.uuid[i] = static_cast<std::uint8_t>(0x5a ^ (i * 37));
  sb.nr_users = 1;

  nvj::bench::SessionShape shape;
  shape.wraps = wraps;
  shape.seed = seed;
  Bench bench(sb, shape, batch_kib * 1024, seconds);
  bench.fixed_passes = passes;
  const auto& s = bench.session;
  std::fprintf(stderr,
               "journal_decoder_bench: %u MiB journal, 4 KiB blocks, csum v3 + 64bit; one session = %zu writes "
               "(%.0f MiB), %llu transactions, %llu logged blocks (%llu escaped), %llu revoke records, %llu superblock "
               "updates; %zu requests of 4 KiB, %zu of up to %u KiB\n",
               journal_mib, s.writes.size(), static_cast<double>(bench.session_bytes) / (1 << 20),
               static_cast<unsigned long long>(s.transactions), static_cast<unsigned long long>(s.logged_blocks),
               static_cast<unsigned long long>(s.escaped_blocks), static_cast<unsigned long long>(s.revoked),
               static_cast<unsigned long long>(s.superblock_writes), bench.single.size(), bench.batched.size(),
               batch_kib);

  const std::string big = std::to_string(batch_kib) + "k";
  struct Variant {
    std::string name;
    int kind;  // 0 decode, 1 crc32c, 2 memcpy
    const std::vector<Request>* reqs;
  };
  const std::vector<Variant> variants{
      {"decode-4k", 0, &bench.single},  {"decode-" + big, 0, &bench.batched}, {"crc32c-4k", 1, &bench.single},
      {"crc32c-" + big, 1, &bench.batched}, {"memcpy-4k", 2, &bench.single}, {"memcpy-" + big, 2, &bench.batched},
  };
  bool ok = true;
  if (!only.empty()) rounds = 1;
  for (std::uint32_t round = 1; round <= rounds; ++round) {
    for (std::size_t k = 0; k < variants.size(); ++k) {
      const Variant& v = variants[(k + round - 1) % variants.size()];
      if (!only.empty() && v.name != only) continue;
      const Result r = v.kind == 0 ? bench.decode(*v.reqs) : v.kind == 1 ? bench.crc(*v.reqs) : bench.copy(*v.reqs);
      if (r.check != "-" && r.check != "ok") ok = false;
      std::printf("%u\t%s\t%llu\t%.6f\t%llu\t%s\n", round, v.name.c_str(), static_cast<unsigned long long>(r.bytes),
                  r.seconds, static_cast<unsigned long long>(r.transactions), r.check.c_str());
      std::fflush(stdout);
      std::fprintf(stderr, "  round %u  %-12s %7.3f GB/s  %s\n", round, v.name.c_str(),
                   static_cast<double>(r.bytes) / r.seconds / 1e9, r.check.c_str());
    }
  }
  return ok ? 0 : 1;
}
