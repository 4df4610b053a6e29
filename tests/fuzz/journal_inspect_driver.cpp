// SPDX-License-Identifier: BSD-3-Clause
// A driver for the journal inspector's fuzz target where libFuzzer is not
// at hand: it builds crashed journals with LogBuilder (s_start != 0:
// committed transactions, then one without its commit block, over stale
// transactions of an earlier pass; revokes of blocks logged before and
// after, escaped blocks, logs that wrap) for 32- and 64-bit tags, checksums
// none, v1, v2 and v3, async commit, fast commit, 1 and 4 KiB blocks, on a
// journal device or in runs as an internal journal; then mutates them
// deterministically from a seed (bytes corrupted where headers, tags, revoke
// counts and checksums are, blocks copied, swapped or zeroed, superblock
// fields changed, checksums fixed up or not, the filesystem's size changed)
// and hands each result to LLVMFuzzerTestOneInput. Usage: fuzz_loop.h.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "fscore/endian.h"
#include "fscore/jbd2/journal_log.h"
#include "tests/support/jbd2_log_builder.h"
#include "tests/fuzz/fuzz_loop.h"
#include "tests/fuzz/journal_inspect_fuzz.h"

namespace {

namespace jbd2 = fscore::jbd2;
namespace ins = nvj::fuzz::inspect;

struct Seed {
  std::string name;
  jbd2::JournalSuperblock sb;
  std::uint64_t device_blocks = 0;
  std::uint32_t fs_blocks = 4096;
  std::vector<jbd2::LogRun> runs;  // empty: a journal device
  std::map<std::uint32_t, std::vector<std::uint8_t>> blocks;  // log block -> its bytes (block 0: the superblock)
};

std::uint64_t device_block(const Seed& s, std::uint32_t log_block) {
  std::uint64_t at = log_block;
  for (const jbd2::LogRun& r : s.runs) {
    if (at < r.count) return r.first_block + at;
    at -= r.count;
  }
  return log_block;
}

std::vector<std::uint8_t> encode(const Seed& s) {
  std::vector<std::uint8_t> out(ins::kHeaderSize);
  std::memcpy(out.data(), ins::kMagic, sizeof ins::kMagic);
  const std::uint32_t bs = s.sb.block_size;
  fscore::store_le<std::uint64_t>(out.data() + 8, s.device_blocks * bs);
  fscore::store_le<std::uint32_t>(out.data() + 16, bs);
  fscore::store_le<std::uint32_t>(out.data() + 20, s.fs_blocks);
  out[24] = static_cast<std::uint8_t>(s.runs.size());
  for (const jbd2::LogRun& r : s.runs) {
    const std::size_t at = out.size();
    out.resize(at + ins::kRunSize);
    fscore::store_le<std::uint64_t>(out.data() + at, r.first_block);
    fscore::store_le<std::uint32_t>(out.data() + at + 8, static_cast<std::uint32_t>(r.count));
  }
  for (const auto& [block, bytes] : s.blocks) {
    std::size_t n = bytes.size();  // trailing zeros need no bytes
    while (n > 0 && bytes[n - 1] == 0) --n;
    const std::size_t at = out.size();
    out.resize(at + ins::kRecordHeaderSize);
    fscore::store_le<std::uint64_t>(out.data() + at, device_block(s, block) * bs);
    fscore::store_le<std::uint32_t>(out.data() + at + 8, static_cast<std::uint32_t>(n));
    out.insert(out.end(), bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(n));
  }
  return out;
}

void put_superblock(Seed& s) {
  std::vector<std::uint8_t>& b = s.blocks[0];
  b.assign(s.sb.block_size, 0);
  encode_journal_superblock(s.sb, std::span<std::uint8_t, jbd2::kSuperblockSize>(b.data(), jbd2::kSuperblockSize));
}

// ------------------------------------------------------------------ seeds

jbd2::JournalSuperblock make_super(std::uint32_t bs, std::uint32_t maxlen, std::uint32_t incompat, std::uint32_t compat,
                                   std::uint8_t id) {
  jbd2::JournalSuperblock sb;
  sb.block_size = bs;
  sb.maxlen = maxlen;
  sb.feature_compat = compat;
  sb.feature_incompat = incompat;
  if (sb.has_csum_v2_or_v3()) sb.checksum_type = 4;
  if ((incompat & jbd2::feature::kIncompatFastCommit) != 0) sb.num_fc_blocks = 16;
  for (std::size_t i = 0; i < 16; ++i) sb.uuid[i] = static_cast<std::uint8_t>(id * 16 + i * 3 + 1);
  return sb;
}

// Lays `count` transactions out from `head` with `tid` into the seed's
// blocks; the last one without its commit block when `abandon`.
void lay_out(Seed& s, std::uint32_t head, std::uint32_t tid, int count, bool abandon, std::mt19937_64& rng) {
  jbd2::LogBuilder b(s.sb, head, tid);
  const auto below = [&](std::uint64_t n) { return n == 0 ? 0 : rng() % n; };
  const std::uint32_t bs = s.sb.block_size;
  const std::uint64_t len = b.format().last - b.format().first;
  for (int t = 0; t < count; ++t) {
    const std::uint64_t logged = 1 + below(std::min<std::uint64_t>(len / (2 * static_cast<std::uint64_t>(count) + 2) + 1,
                                                                   below(5) == 0 ? b.tags_per_descriptor() + 2 : 8));
    for (std::uint64_t i = 0; i < logged; ++i) {
      std::vector<std::uint8_t> content(bs, 0);
      for (std::size_t k = 0; k < 32; ++k) content[k] = static_cast<std::uint8_t>(rng());
      if (below(6) == 0) fscore::store_be<std::uint32_t>(content.data(), jbd2::kMagic);  // escaped
      b.log(below(3) == 0 ? 10 + i : below(s.fs_blocks), content);  // blocks 10.. logged again and again
    }
    if (below(3) == 0) {
      const std::uint64_t n = below(4) == 0 ? bs / 4 : 1 + below(4);
      for (std::uint64_t i = 0; i < n; ++i) b.revoke(10 + i);
    }
    if (t + 1 == count && abandon) b.abandon();
    else b.commit(1700000000 + static_cast<std::uint64_t>(tid) + static_cast<std::uint64_t>(t), 0);
  }
  for (const jbd2::LogBlockWrite& w : b.blocks()) s.blocks[w.log_block] = w.bytes;
}

Seed crashed(std::string name, const jbd2::JournalSuperblock& super, std::size_t runs, std::mt19937_64& rng) {
  Seed s;
  s.name = std::move(name);
  s.sb = super;
  s.sb.first = 1;
  s.fs_blocks = 2048;
  const std::uint32_t maxlen = s.sb.maxlen;
  const jbd2::LogFormat f = jbd2::LogFormat::from(s.sb);
  const std::uint32_t len = f.last - f.first;
  // An earlier pass all over the log, then the live log from somewhere near
  // its end, so that it wraps.
  lay_out(s, f.first, 1000, 6, false, rng);
  s.sb.start = f.first + len - 1 - static_cast<std::uint32_t>(rng() % (len / 3));
  s.sb.sequence = 2000;
  lay_out(s, s.sb.start, s.sb.sequence, 5, true, rng);
  put_superblock(s);
  s.device_blocks = maxlen;
  if (runs > 0) {  // an internal journal: the log in pieces among other blocks
    std::uint64_t at = 100, left = maxlen;
    for (std::size_t i = 0; i < runs; ++i) {
      const std::uint64_t n = i + 1 == runs ? left : left / 2;
      s.runs.push_back({at, n});
      at += n + 37;
      left -= n;
    }
    s.device_blocks = at;
  }
  return s;
}

std::vector<Seed> build_seeds() {
  using namespace jbd2::feature;
  std::mt19937_64 rng(7);
  std::vector<Seed> seeds;
  seeds.push_back(crashed("4k-32bit", make_super(4096, 256, kIncompatRevoke, 0, 1), 0, rng));
  seeds.push_back(crashed("4k-64bit-v3", make_super(4096, 128, kIncompatRevoke | kIncompat64bit | kIncompatCsumV3, 0, 2), 0, rng));
  seeds.push_back(crashed("1k-v2-runs", make_super(1024, 512, kIncompatRevoke | kIncompatCsumV2, 0, 3), 3, rng));
  seeds.push_back(crashed("1k-64bit-v1", make_super(1024, 256, kIncompatRevoke | kIncompat64bit, kCompatChecksum, 4), 0, rng));
  seeds.push_back(crashed("4k-async-v3-runs", make_super(4096, 96, kIncompatRevoke | kIncompatAsyncCommit | kIncompatCsumV3, 0, 5), 2, rng));
  seeds.push_back(crashed("1k-small-none", make_super(1024, 40, kIncompatRevoke, 0, 6), 0, rng));
  seeds.push_back(crashed("4k-small-v3", make_super(4096, 32, kIncompatRevoke | kIncompatCsumV3, 0, 7), 0, rng));
  seeds.push_back(crashed("4k-fast-commit", make_super(4096, 128, kIncompatRevoke | kIncompatCsumV3 | kIncompatFastCommit, 0, 8), 0, rng));
  Seed v1 = crashed("1k-v1-superblock", make_super(1024, 64, 0, 0, 9), 0, rng);
  v1.sb.blocktype = 3;
  put_superblock(v1);
  seeds.push_back(std::move(v1));
  Seed clean = crashed("4k-clean", make_super(4096, 64, kIncompatRevoke | kIncompatCsumV3, 0, 10), 0, rng);
  clean.sb.start = 0;
  put_superblock(clean);
  seeds.push_back(std::move(clean));
  Seed small_fs = crashed("1k-v3-small-fs", make_super(1024, 128, kIncompatRevoke | kIncompatCsumV3, 0, 11), 0, rng);
  small_fs.fs_blocks = 600;  // some blocks logged past its end
  seeds.push_back(std::move(small_fs));
  return seeds;
}

// --------------------------------------------------------------- mutation

constexpr std::uint32_t kInteresting[] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 12, 16, 31, 32, 33, 64, 127, 128, 255, 256,
                                          1000, 1001, 1999, 2000, 2001, 2004, 2005, 1020, 1024, 4084, 4092, 4096,
                                          0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, jbd2::kMagic};

class Mutator {
 public:
  explicit Mutator(std::uint64_t seed) : rng_(seed) {}
  std::uint64_t below(std::uint64_t n) { return n == 0 ? 0 : rng_() % n; }
  bool one_in(std::uint64_t n) { return below(n) == 0; }
  std::uint32_t interesting() {
    return one_in(4) ? static_cast<std::uint32_t>(rng_()) : kInteresting[below(std::size(kInteresting))];
  }

  std::vector<std::uint8_t>& pick(Seed& s, std::uint32_t* which = nullptr) {
    auto it = s.blocks.begin();
    std::advance(it, static_cast<std::ptrdiff_t>(below(s.blocks.size())));
    if (which != nullptr) *which = it->first;
    return it->second;
  }

  void mutate(Seed& s) {
    switch (below(10)) {
      case 0: case 1: case 2: case 3: {  // bytes where headers, tags, revoke counts and checksums are
        std::uint32_t which = 0;
        std::vector<std::uint8_t>& b = pick(s, &which);
        if (b.empty()) break;
        std::size_t at = one_in(2) ? below(48) : one_in(2) ? b.size() - 1 - below(8) : below(b.size());
        at = std::min(at, b.size() - 1);
        if (which == 0) at = std::min<std::size_t>(at, 0x100);
        if (one_in(3)) b[at] ^= static_cast<std::uint8_t>(1u << below(8));
        else if ((at & ~std::size_t{3}) + 4 <= b.size()) fscore::store_be<std::uint32_t>(b.data() + (at & ~std::size_t{3}), interesting());
        break;
      }
      case 4: {  // a block copied over another, or moved
        std::uint32_t from = 0;
        const std::vector<std::uint8_t> copy = pick(s, &from);
        const auto to = static_cast<std::uint32_t>(1 + below(s.sb.maxlen - 1));
        s.blocks[to] = copy;
        if (one_in(2) && from != 0) s.blocks.erase(from);
        break;
      }
      case 5: {  // a block gone (zeros)
        std::uint32_t which = 0;
        pick(s, &which);
        if (which != 0) s.blocks.erase(which);
        break;
      }
      case 6: case 7: {  // superblock fields, encoded so the checksum matches
        const std::uint32_t v = interesting();
        switch (below(7)) {
          case 0: s.sb.start = one_in(4) ? v : static_cast<std::uint32_t>(1 + below(s.sb.maxlen - 1)); break;
          case 1: s.sb.sequence += static_cast<std::uint32_t>(below(5)) - 2; break;
          case 2: s.sb.maxlen = one_in(4) ? v : s.sb.maxlen + static_cast<std::uint32_t>(below(9)) - 4; break;
          case 3: s.sb.first = one_in(3) ? v : static_cast<std::uint32_t>(1 + below(4)); break;
          case 4: s.sb.feature_incompat ^= 1u << below(6); break;
          case 5: s.sb.feature_compat ^= 1; break;
          default: s.sb.num_fc_blocks = v;
        }
        if (s.sb.has_csum_v2_or_v3()) s.sb.checksum_type = 4;
        put_superblock(s);
        break;
      }
      case 8: fix_checksums(s); break;
      default:
        if (one_in(2)) s.fs_blocks = one_in(2) ? interesting() : static_cast<std::uint32_t>(below(4096));
        else if (one_in(2)) s.device_blocks = one_in(2) ? s.device_blocks - below(s.device_blocks / 4 + 1) : interesting();
        else if (!s.runs.empty()) s.runs[below(s.runs.size())].count += below(5) - 2;
    }
  }

  // v2/v3: the checksums of descriptor, revoke and commit blocks made to
  // match again, so a change is judged on what it changed.
  void fix_checksums(Seed& s) {
    const jbd2::LogFormat f = jbd2::LogFormat::from(s.sb);
    for (auto& [block, bytes] : s.blocks) {
      const auto h = jbd2::read_block_header(bytes);
      if (block == 0 || !h || bytes.size() != f.block_size) continue;
      if (h->type == 1 || h->type == 5) jbd2::set_block_tail_checksum(f, bytes);
      if (h->type == 2) jbd2::set_commit_checksum(f, bytes);
    }
  }

 private:
  std::mt19937_64 rng_;
};

}  // namespace

int main(int argc, char** argv) {
  const nvj::fuzz::LoopOptions options = nvj::fuzz::parse_loop_options("journal_inspect_fuzz", argc, argv);
  const std::vector<Seed> seeds = build_seeds();
  nvj::fuzz::FuzzLoop loop;
  loop.name = "journal_inspect_fuzz";
  for (const Seed& s : seeds) {
    loop.seeds.push_back({s.name, encode(s)});
    // Unmutated, a seed is a crashed journal that replays (or, on purpose,
    // one the scan refuses or that is clean): else the fuzzing starts nowhere.
    const ins::Outcome before = ins::outcome();
    LLVMFuzzerTestOneInput(loop.seeds.back().bytes.data(), loop.seeds.back().bytes.size());
    const ins::Outcome& after = ins::outcome();
    const bool ok = s.name.find("fast-commit") != std::string::npos ? after.fast_commit > before.fast_commit
                    : s.name.find("clean") != std::string::npos     ? after.clean > before.clean
                    : s.name.find("small-fs") != std::string::npos  ? after.replay_errors > before.replay_errors
                                                                    : after.replayed_blocks > before.replayed_blocks &&
                                                                        after.replays > before.replays;
    if (!ok) {
      std::fprintf(stderr, "journal_inspect_fuzz: seed %s does not do what it is for\n", s.name.c_str());
      return 1;
    }
  }
  Mutator m(options.seed);
  Seed work;
  loop.next = [&](std::vector<std::uint8_t>& input) {
    const std::size_t which = static_cast<std::size_t>(m.below(seeds.size()));
    work = seeds[which];
    const std::uint64_t n = m.one_in(8) ? 1 + m.below(16) : 1 + m.below(3);
    for (std::uint64_t i = 0; i < n; ++i) m.mutate(work);
    if (m.one_in(2)) m.fix_checksums(work);
    input = encode(work);
    if (m.one_in(32) && !input.empty()) input[m.below(input.size())] = static_cast<std::uint8_t>(m.below(256));
    return which;
  };
  const ins::Outcome start = ins::outcome();
  loop.summary = [&] {
    const ins::Outcome& o = ins::outcome();
    const auto d = [](std::uint64_t a, std::uint64_t b) { return static_cast<unsigned long long>(a - b); };
    std::printf("  %llu inputs: %llu refused, %llu fast commit, %llu clean, %llu scan errors; replays: %llu ok, "
                "%llu failed (%llu with EINVAL); %llu blocks replayed\n",
                d(o.inputs, start.inputs), d(o.refused, start.refused), d(o.fast_commit, start.fast_commit),
                d(o.clean, start.clean), d(o.scan_errors, start.scan_errors), d(o.replays, start.replays),
                d(o.replay_errors, start.replay_errors), d(o.einval, start.einval),
                d(o.replayed_blocks, start.replayed_blocks));
  };
  return nvj::fuzz::run_fuzz_loop(options, loop);
}
