// SPDX-License-Identifier: BSD-3-Clause
// A driver for the journal decoder's fuzz target where libFuzzer is not at
// hand: it lays logs out with LogBuilder for every journal of journals()
// (32- and 64-bit tags, checksums none, v1, v2, v3, async commit, fast
// commit, 1 and 4 KiB blocks, journal devices, small journals that wrap
// several times while superblock updates move the tail), delivered in
// order or shuffled within a transaction, with the superblock present or
// written first, and a clean unmount and remount at s_head; then mutates
// them deterministically from a seed (bytes corrupted where headers, tags
// and checksums are, writes dropped, duplicated, reordered, moved, split
// or merged, superblock updates with other fields, times and FUA changed)
// and hands each result to LLVMFuzzerTestOneInput. Usage: fuzz_loop.h.
#include <algorithm>
#include <cstdio>
#include <deque>
#include <random>
#include <string>
#include <vector>

#include "fscore/endian.h"
#include "tests/support/jbd2_log_builder.h"
#include "tests/fuzz/fuzz_loop.h"
#include "tests/fuzz/journal_decoder_fuzz.h"

namespace {

namespace jbd2 = fscore::jbd2;
namespace dec = nvj::fuzz::decoder;

struct Op {
  bool flush = false;
  std::uint64_t offset = 0;
  std::vector<std::uint8_t> bytes;
  bool fua = false;
  std::int32_t step = 1000;
  std::int32_t delay = 500;
};

struct Seed {
  std::string name;
  std::uint8_t journal = 0;
  std::uint8_t flags = 0;
  std::vector<Op> ops;
};

std::vector<std::uint8_t> encode(const Seed& s) {
  std::vector<std::uint8_t> out = {s.journal, s.flags};
  for (const Op& op : s.ops) {
    const std::size_t at = out.size();
    if (op.flush) {
      out.resize(at + dec::kFlushSize);
      out[at] = dec::kFlush;
      fscore::store_le<std::uint32_t>(out.data() + at + 1, static_cast<std::uint32_t>(op.step));
      continue;
    }
    out.resize(at + dec::kWriteHeaderSize);
    out[at] = dec::kWrite;
    fscore::store_le<std::uint64_t>(out.data() + at + 1, op.offset);
    fscore::store_le<std::uint32_t>(out.data() + at + 9, static_cast<std::uint32_t>(op.bytes.size()));
    out[at + 13] = op.fua ? 1 : 0;
    fscore::store_le<std::uint32_t>(out.data() + at + 14, static_cast<std::uint32_t>(op.step));
    fscore::store_le<std::uint32_t>(out.data() + at + 18, static_cast<std::uint32_t>(op.delay));
    out.insert(out.end(), op.bytes.begin(), op.bytes.end());
  }
  return out;
}

Op superblock_op(const jbd2::JournalSuperblock& sb, std::uint64_t offset) {
  Op op;
  op.offset = offset;
  op.bytes.resize(jbd2::kSuperblockSize);
  encode_journal_superblock(sb, std::span<std::uint8_t, jbd2::kSuperblockSize>(op.bytes.data(), jbd2::kSuperblockSize));
  op.fua = true;
  return op;
}

// ------------------------------------------------------------------ seeds

struct Workload {
  int transactions = 20;
  bool shuffle = false;
  bool present = true;     // superblock in the image from the start
  bool remount = false;    // a clean unmount, then the log resumes at s_head
  bool abandon = false;    // a last transaction without its commit block
  std::uint32_t tid = 100;
};

Seed workload(std::string name, std::uint8_t j, const Workload& w, std::mt19937_64& rng) {
  const dec::JournalChoice& c = dec::journals()[j];
  jbd2::JournalSuperblock sb = c.sb;
  const jbd2::LogFormat f = jbd2::LogFormat::from(sb);
  const std::uint32_t len = f.last - f.first;
  const std::uint32_t bs = f.block_size;
  Seed s{std::move(name), j, static_cast<std::uint8_t>((w.present ? dec::kFlagSuperblockPresent : 0) | (rng() % 2 != 0 ? dec::kFlagOracle : 0)), {}};
  const auto below = [&](std::uint64_t n) { return n == 0 ? 0 : rng() % n; };

  std::uint32_t head = f.first + static_cast<std::uint32_t>(below(len));
  sb.start = head;
  sb.sequence = w.tid;
  s.ops.push_back(superblock_op(sb, c.superblock_offset));
  jbd2::LogBuilder b(sb, head, w.tid);
  struct Live {
    std::uint32_t start, tid, blocks;
  };
  std::deque<Live> live;
  std::uint32_t used = 0;
  const std::size_t per = b.tags_per_descriptor();
  // Mostly small transactions; now and then one of more than a descriptor
  // block's tags, when the journal has room for it.
  const std::uint64_t small_tx = std::max<std::uint64_t>(1, std::min<std::uint64_t>(len / 5, 12));
  const std::uint64_t large_tx = std::max<std::uint64_t>(1, std::min<std::uint64_t>(len / 5, per + 2));

  for (int t = 0; t <= w.transactions; ++t) {
    const bool last = t == w.transactions;
    if (last && !w.abandon) break;
    if (w.remount && t == w.transactions / 2) {  // clean unmount, then mount: the log resumes at s_head
      sb.start = 0;
      sb.head = b.head();
      sb.sequence = b.next_tid();
      s.ops.push_back(superblock_op(sb, c.superblock_offset));
      sb.start = b.head();
      s.ops.push_back(superblock_op(sb, c.superblock_offset));
      live.clear();
      used = 0;
    }
    const std::uint32_t start = b.head(), tid = b.next_tid();
    if (below(4) == 0) {
      const std::uint64_t n = below(3) == 0 ? bs / 8 + below(bs / 4) : 1 + below(8);
      for (std::uint64_t i = 0; i < n; ++i) b.revoke(f.bit64 && below(4) == 0 ? (std::uint64_t{1} << 33) + i : 500 + i);
    }
    const std::uint64_t logged = 1 + below(below(6) == 0 ? large_tx : small_tx);
    for (std::uint64_t i = 0; i < logged; ++i) {
      std::vector<std::uint8_t> content(bs, 0);
      for (std::size_t k = 0; k < 64; ++k) content[k] = static_cast<std::uint8_t>(rng());
      if (below(8) == 0) fscore::store_be<std::uint32_t>(content.data(), jbd2::kMagic);  // escaped
      b.log(f.bit64 && below(4) == 0 ? (std::uint64_t{7} << 32) + i : 1000 + below(100000), content);
    }
    const std::size_t blocks = last ? b.abandon() : b.commit(1700000000 + static_cast<std::uint64_t>(t), 1000);
    // Checkpoint: the tail moves on (a superblock update) before the log
    // would overwrite what is still needed.
    while (!live.empty() && used + blocks > len * 3 / 4) {
      used -= live.front().blocks;
      live.pop_front();
      sb.start = live.empty() ? start : live.front().start;
      sb.sequence = live.empty() ? tid : live.front().tid;
      s.ops.push_back(superblock_op(sb, c.superblock_offset));
    }
    live.push_back({start, tid, static_cast<std::uint32_t>(blocks)});
    used += static_cast<std::uint32_t>(blocks);

    // Writes of up to 8 consecutive blocks; the commit block on its own,
    // FUA, after a flush (async commit: with the rest).
    std::vector<Op> writes;
    const auto& out = b.blocks();
    for (std::size_t i = 0; i < out.size(); ++i) {
      const bool commit = !last && i + 1 == out.size();
      const std::uint64_t offset = std::uint64_t{out[i].log_block} * bs;
      if (!commit && !writes.empty() && !writes.back().fua && writes.back().bytes.size() < 8 * bs &&
          writes.back().offset + writes.back().bytes.size() == offset) {
        writes.back().bytes.insert(writes.back().bytes.end(), out[i].bytes.begin(), out[i].bytes.end());
        continue;
      }
      Op op;
      op.offset = offset;
      op.bytes = out[i].bytes;
      op.fua = commit;
      op.step = static_cast<std::int32_t>(1000 + below(20000));
      op.delay = static_cast<std::int32_t>(200 + below(5000));
      writes.push_back(std::move(op));
    }
    b.blocks().clear();
    const bool commit_last = !f.async_commit && !last && !writes.empty();  // the commit block stays last
    if (w.shuffle || f.async_commit)
      std::shuffle(writes.begin(), writes.end() - (commit_last ? 1 : 0), rng);
    for (std::size_t i = 0; i < writes.size(); ++i) {
      if (writes[i].fua && !f.async_commit) s.ops.push_back(Op{true, 0, {}, false, 100, 0});
      s.ops.push_back(std::move(writes[i]));
    }
    if (f.fast_commit && below(4) == 0) {  // a fast commit between full commits
      Op fc;
      fc.offset = std::uint64_t{f.last + static_cast<std::uint32_t>(below(f.maxlen - f.last))} * bs;
      fc.bytes.assign(bs, 0x5A);
      s.ops.push_back(std::move(fc));
    }
  }
  return s;
}

std::vector<Seed> build_seeds() {
  std::mt19937_64 rng(42);
  std::vector<Seed> seeds;
  for (std::size_t j = 0; j < dec::journals().size(); ++j) {
    const auto id = static_cast<std::uint8_t>(j);
    const dec::JournalChoice& c = dec::journals()[j];
    const bool small = c.sb.maxlen <= 128;
    const std::string name = std::to_string(c.sb.block_size / 1024) + "k-" + std::to_string(c.sb.maxlen) + "-j" +
                             std::to_string(j);
    seeds.push_back(workload(name + "-in-order", id, {.transactions = small ? 40 : 12}, rng));
    seeds.push_back(workload(name + "-shuffled", id, {.transactions = small ? 40 : 10, .shuffle = true,
                                                      .present = j % 2 == 0, .abandon = true}, rng));
    if (j % 3 == 0)
      seeds.push_back(workload(name + "-remount", id, {.transactions = 10, .remount = true, .tid = 0xFFFFFFFA}, rng));
  }
  return seeds;
}

// --------------------------------------------------------------- mutation

constexpr std::uint32_t kInteresting[] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 12, 16, 40, 48, 127, 128, 255, 256, 511, 512,
                                          1023, 1024, 2047, 2048, 4095, 4096, 4097, 0x7FFFFFFF, 0x80000000,
                                          0xFFFFFFFE, 0xFFFFFFFF, jbd2::kMagic};

class Mutator {
 public:
  explicit Mutator(std::uint64_t seed) : rng_(seed) {}
  std::uint64_t below(std::uint64_t n) { return n == 0 ? 0 : rng_() % n; }
  bool one_in(std::uint64_t n) { return below(n) == 0; }

  std::uint32_t interesting(const Seed& s) {
    if (one_in(4)) return static_cast<std::uint32_t>(rng_());
    if (one_in(3) && !s.ops.empty()) {  // a word near one of the seed's, e.g. a tid or a block number
      const Op& op = s.ops[below(s.ops.size())];
      if (op.bytes.size() >= 16) return fscore::load_be<std::uint32_t>(op.bytes.data() + 4 * below(4)) + static_cast<std::uint32_t>(below(5)) - 2;
    }
    return kInteresting[below(std::size(kInteresting))];
  }

  std::size_t pick_write(const Seed& s) {
    for (int tries = 0; tries < 8; ++tries) {
      const std::size_t i = below(s.ops.size());
      if (!s.ops[i].flush && !s.ops[i].bytes.empty()) return i;
    }
    return s.ops.size();
  }

  void mutate(Seed& s) {
    const std::uint32_t bs = dec::journals()[s.journal % dec::journals().size()].sb.block_size;
    std::vector<Op>& ops = s.ops;
    if (ops.empty()) return;
    const std::size_t i = pick_write(s);
    switch (below(14)) {
      case 0: case 1: case 2: {  // corrupt bytes where headers, tags and checksums are
        if (i == ops.size()) break;
        std::vector<std::uint8_t>& b = ops[i].bytes;
        const std::size_t block = below((b.size() + bs - 1) / bs) * bs;
        std::size_t at = block + (one_in(2) ? below(64) : one_in(2) ? bs - 1 - below(8) : below(bs));
        at = std::min(at, b.size() - 1);
        switch (below(3)) {
          case 0: b[at] ^= static_cast<std::uint8_t>(1u << below(8)); break;
          case 1: b[at] = static_cast<std::uint8_t>(rng_()); break;
          default:
            at &= ~std::size_t{3};
            if (at + 4 <= b.size()) fscore::store_be<std::uint32_t>(b.data() + at, interesting(s));
        }
        break;
      }
      case 3: ops.erase(ops.begin() + static_cast<std::ptrdiff_t>(below(ops.size()))); break;
      case 4: {  // duplicate, here or later
        const Op copy = ops[below(ops.size())];
        ops.insert(ops.begin() + static_cast<std::ptrdiff_t>(below(ops.size() + 1)), copy);
        break;
      }
      case 5: case 6: {  // reorder: swap neighbours or move one far
        const std::size_t a = below(ops.size());
        const std::size_t b = one_in(2) ? std::min(a + 1 + below(4), ops.size() - 1) : below(ops.size());
        std::swap(ops[a], ops[b]);
        break;
      }
      case 7: {  // another offset
        if (i == ops.size()) break;
        std::uint64_t& o = ops[i].offset;
        switch (below(4)) {
          case 0: o += bs * (1 + below(4)); break;
          case 1: o = o >= bs ? o - bs : o; break;
          case 2: o = below(4096) * bs; break;
          default: o += one_in(2) ? 1 + below(bs) : ~std::uint64_t{0} - below(bs);
        }
        break;
      }
      case 8: {  // FUA, time
        Op& op = ops[below(ops.size())];
        if (one_in(2)) op.fua = !op.fua;
        else if (one_in(2)) op.step = static_cast<std::int32_t>(interesting(s));
        else op.delay = -op.delay;
        break;
      }
      case 9: ops.insert(ops.begin() + static_cast<std::ptrdiff_t>(below(ops.size() + 1)),
                         Op{true, 0, {}, false, static_cast<std::int32_t>(below(100000)), 0});
        break;
      case 10: superblock_update(s); break;
      case 11: {  // stale bytes: another write's over this one's
        const std::size_t k = pick_write(s);
        if (i == ops.size() || k == ops.size()) break;
        const std::size_t n = std::min(ops[i].bytes.size(), ops[k].bytes.size());
        std::copy_n(ops[k].bytes.begin(), one_in(2) ? n : std::min<std::size_t>(n, 12), ops[i].bytes.begin());
        break;
      }
      case 12: {  // split a write at a block boundary, or cut it short
        if (i == ops.size() || ops[i].bytes.size() <= 1) break;
        Op tail = ops[i];
        const std::size_t cut = ops[i].bytes.size() > bs && one_in(2) ? bs * (1 + below(ops[i].bytes.size() / bs - 1))
                                                                        : 1 + below(ops[i].bytes.size() - 1);
        ops[i].bytes.resize(cut);
        tail.bytes.erase(tail.bytes.begin(), tail.bytes.begin() + static_cast<std::ptrdiff_t>(cut));
        tail.offset += cut;
        ops.insert(ops.begin() + static_cast<std::ptrdiff_t>(i + 1 + (one_in(2) ? 0 : below(ops.size() - i))), tail);
        break;
      }
      default:
        if (one_in(2)) ops.resize(below(ops.size() + 1));
        else if (one_in(4)) s.journal = static_cast<std::uint8_t>(rng_());
        else s.flags = static_cast<std::uint8_t>(rng_());
    }
  }

  // A superblock write with some fields changed (encoded, so its checksum
  // matches), somewhere in the sequence.
  void superblock_update(Seed& s) {
    const dec::JournalChoice& c = dec::journals()[s.journal % dec::journals().size()];
    jbd2::JournalSuperblock sb = c.sb;
    for (const Op& op : s.ops) {  // the seed's own last superblock, if it has one
      if (op.flush || op.offset != c.superblock_offset || op.bytes.size() < jbd2::kSuperblockSize) continue;
      try {
        sb = jbd2::decode_journal_superblock(std::span<const std::uint8_t, jbd2::kSuperblockSize>(op.bytes.data(), jbd2::kSuperblockSize));
      } catch (const std::exception&) {
      }
    }
    const std::uint32_t v = interesting(s);
    switch (below(9)) {
      case 0: sb.start = one_in(3) ? 0 : static_cast<std::uint32_t>(sb.first + below(sb.maxlen - sb.first)); break;
      case 1: sb.sequence += static_cast<std::uint32_t>(below(5)) - 2; break;
      case 2: sb.head = one_in(2) ? v : static_cast<std::uint32_t>(below(sb.maxlen)); break;
      case 3: sb.maxlen = one_in(4) ? v : static_cast<std::uint32_t>(sb.first + 1 + below(dec::kMaxFuzzBlocks)); break;
      case 4: sb.first = one_in(4) ? v : static_cast<std::uint32_t>(1 + below(8)); break;
      case 5: sb.feature_incompat ^= 1u << below(6); break;
      case 6: sb.num_fc_blocks = one_in(2) ? v : static_cast<std::uint32_t>(below(sb.maxlen)); break;
      case 7: sb.errno_value = -5; break;
      default: sb.block_size = one_in(2) ? v : 1024u << below(4);
    }
    if (sb.has_csum_v2_or_v3()) sb.checksum_type = 4;
    s.ops.insert(s.ops.begin() + static_cast<std::ptrdiff_t>(below(s.ops.size() + 1)), superblock_op(sb, c.superblock_offset));
  }

  // A byte of the encoded input itself, framing included.
  void raw(std::vector<std::uint8_t>& input) {
    if (!input.empty()) input[below(input.size())] = static_cast<std::uint8_t>(rng_());
  }

 private:
  std::mt19937_64 rng_;
};

}  // namespace

int main(int argc, char** argv) {
  const nvj::fuzz::LoopOptions options = nvj::fuzz::parse_loop_options("journal_decoder_fuzz", argc, argv);
  const std::vector<Seed> seeds = build_seeds();
  nvj::fuzz::FuzzLoop loop;
  loop.name = "journal_decoder_fuzz";
  for (const Seed& s : seeds) {
    loop.seeds.push_back({s.name, encode(s)});
    // Unmutated and in order, a seed decodes without problems: else the
    // fuzzing starts nowhere.
    const dec::Outcome before = dec::outcome();
    LLVMFuzzerTestOneInput(loop.seeds.back().bytes.data(), loop.seeds.back().bytes.size());
    const bool in_order = s.name.ends_with("-in-order") || s.name.ends_with("-remount");
    if (dec::outcome().transactions == before.transactions || (in_order && dec::outcome().problems != before.problems)) {
      std::fprintf(stderr, "journal_decoder_fuzz: seed %s decodes with problems or no transaction\n", s.name.c_str());
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
    input = encode(work);
    if (m.one_in(32)) m.raw(input);
    return which;
  };
  const dec::Outcome start = dec::outcome();
  loop.summary = [&] {
    const dec::Outcome& o = dec::outcome();
    std::printf("  %llu inputs: %llu writes (%llu dropped: journal too large), %llu transactions, %llu logged blocks, "
                "%llu problems; synchronized at the end: %llu; head outside the log after a reshape: %llu\n",
                static_cast<unsigned long long>(o.inputs - start.inputs), static_cast<unsigned long long>(o.writes - start.writes),
                static_cast<unsigned long long>(o.dropped_writes - start.dropped_writes),
                static_cast<unsigned long long>(o.transactions - start.transactions),
                static_cast<unsigned long long>(o.logged_blocks - start.logged_blocks),
                static_cast<unsigned long long>(o.problems - start.problems),
                static_cast<unsigned long long>(o.synchronized_at_end - start.synchronized_at_end),
                static_cast<unsigned long long>(o.head_outside_log - start.head_outside_log));
  };
  return nvj::fuzz::run_fuzz_loop(options, loop);
}
