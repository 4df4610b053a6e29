// SPDX-License-Identifier: BSD-3-Clause
// A driver for the dm-log-writes reader's fuzz target (dm_log_fuzz.cpp): it
// writes valid logs with LogWriter (every kind of entry, sector sizes 512
// and 4096, a count not rewritten after the last entries), then mutates them
// deterministically from a seed: bits flipped, the log cut off, a header
// field set to an edge (the sector, the count, the flags, the label's
// length), the super block's count and sector size changed, a header sector
// dropped or repeated. The command line and the loop: fuzz_loop.h.
#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "fscore/dmlog/log_writer.h"
#include "fscore/endian.h"
#include "tests/support/memory_sink.h"
#include "tests/fuzz/dm_log_fuzz.h"
#include "tests/fuzz/fuzz_loop.h"

namespace {

namespace dmlog = fscore::dmlog;
using Bytes = std::vector<std::uint8_t>;

using Memory = nvj::test::MemorySink;

Bytes fill(std::size_t n, std::uint8_t salt) {
  Bytes out(n);
  for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<std::uint8_t>(i * 7 + salt);
  return out;
}

Bytes log_of(std::uint32_t s, bool uncounted) {
  Memory m;
  dmlog::LogWriter w(m, s);
  w.write(0, fill(2 * s, 1));
  w.flush();
  w.mark("mkfs");
  w.write(8, fill(s, 2), dmlog::kFua | dmlog::kMetadata);
  w.discard(4, 16);
  w.mark("fact file d0/t0 size 4096 crc32c 0badf00d");
  w.write(2, fill(s, 3), dmlog::kFlush | dmlog::kFua);
  w.write(30, fill(3 * s, 4));
  w.mark("dm-log-writes-end");
  w.finish();
  if (uncounted) fscore::store_le<std::uint64_t>(m.bytes.data() + 16, 5);
  return m.bytes;
}

class Mutator {
 public:
  explicit Mutator(std::uint64_t seed) : rng_(seed) {}
  std::uint64_t below(std::uint64_t n) { return n == 0 ? 0 : rng_() % n; }
  bool one_in(std::uint64_t n) { return below(n) == 0; }

  void mutate(Bytes& b) {
    if (b.size() < 512) return;
    const std::uint32_t s = fscore::load_le<std::uint32_t>(b.data() + 24);
    const std::uint64_t sector = (s >= 512 && s <= 4096 && (s & (s - 1)) == 0) ? s : 512;
    const std::size_t sectors = b.size() / sector;
    const std::size_t at = sector * (1 + below(sectors > 1 ? sectors - 1 : 1));
    const std::uint64_t edges[] = {0, 1, 2, 4, 8, 0x10, 0x13, 479, 480, ~std::uint64_t{0}, std::uint64_t{1} << 40, 7};
    switch (below(7)) {
      case 0:
        b[below(b.size())] ^= static_cast<std::uint8_t>(1u << below(8));
        break;
      case 1:
        b.resize(below(b.size()));
        break;
      case 2:  // a header field of some sector set to an edge
        if (at + 32 <= b.size()) fscore::store_le<std::uint64_t>(b.data() + at + 8 * below(4), edges[below(12)]);
        break;
      case 3:  // the count
        fscore::store_le<std::uint64_t>(b.data() + 16, one_in(2) ? edges[below(12)] : below(16));
        break;
      case 4: {  // the sector size
        const std::uint32_t sizes[] = {0, 256, 512, 1000, 4096, 1u << 20, 1u << 24};
        fscore::store_le<std::uint32_t>(b.data() + 24, sizes[below(7)]);
        break;
      }
      case 5:  // a sector dropped
        if (at + sector <= b.size())
          b.erase(b.begin() + static_cast<std::ptrdiff_t>(at), b.begin() + static_cast<std::ptrdiff_t>(at + sector));
        break;
      default:  // a sector repeated
        if (at + sector <= b.size()) {
          const Bytes copy(b.begin() + static_cast<std::ptrdiff_t>(at), b.begin() + static_cast<std::ptrdiff_t>(at + sector));
          b.insert(b.begin() + static_cast<std::ptrdiff_t>(at), copy.begin(), copy.end());
        }
    }
  }

 private:
  std::mt19937_64 rng_;
};

}  // namespace

int main(int argc, char** argv) {
  namespace df = nvj::fuzz::dm_log;
  const nvj::fuzz::LoopOptions options = nvj::fuzz::parse_loop_options("dm_log_fuzz", argc, argv);
  nvj::fuzz::FuzzLoop loop;
  loop.name = "dm_log_fuzz";
  loop.seeds = {{"512", log_of(512, false)}, {"4096", log_of(4096, false)}, {"uncounted", log_of(512, true)}};
  for (const auto& s : loop.seeds) {
    const df::Outcome before = df::outcome();
    LLVMFuzzerTestOneInput(s.bytes.data(), s.bytes.size());
    if (df::outcome().read != before.read + 1) {
      std::fprintf(stderr, "dm_log_fuzz: seed %s does not read\n", s.name.c_str());
      return 1;
    }
  }
  Mutator m(options.seed);
  loop.next = [&](std::vector<std::uint8_t>& input) {
    const std::size_t which = static_cast<std::size_t>(m.below(loop.seeds.size()));
    input = loop.seeds[which].bytes;
    const std::uint64_t n = 1 + m.below(3);
    for (std::uint64_t i = 0; i < n; ++i) m.mutate(input);
    return which;
  };
  const df::Outcome start = df::outcome();
  loop.summary = [&] {
    const df::Outcome& o = df::outcome();
    std::printf("  %llu inputs: %llu refused, %llu read whole and imported (%llu entries)\n",
                static_cast<unsigned long long>(o.inputs - start.inputs),
                static_cast<unsigned long long>(o.refused - start.refused),
                static_cast<unsigned long long>(o.read - start.read),
                static_cast<unsigned long long>(o.entries - start.entries));
  };
  return nvj::fuzz::run_fuzz_loop(options, loop);
}
