// SPDX-License-Identifier: BSD-3-Clause
// A driver for the XFS log scan's fuzz target where libFuzzer is not at
// hand: it builds logs with fscore/xfs/record_builder.h (records in order,
// a log that wrapped with a record across its end, 64 and 256 KiB log
// buffers with extended headers, mkfs's records without a CRC, a torn
// record), then mutates them deterministically from a seed (bytes of
// headers and data changed, cycle stamps changed, blocks copied, swapped or
// zeroed, the log cut short) and hands each result to
// LLVMFuzzerTestOneInput. Usage: fuzz_loop.h.
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "fscore/endian.h"
#include "tests/support/xfs_record_builder.h"
#include "tests/fuzz/fuzz_loop.h"
#include "tests/fuzz/xfs_log_fuzz.h"

namespace {

namespace xfs = fscore::xfs;
using Bytes = std::vector<std::uint8_t>;

Bytes payload(std::size_t n, std::mt19937_64& rng) {
  Bytes b(n);
  for (auto& x : b) x = static_cast<std::uint8_t>(rng());
  return b;
}

// Records of `size`-byte log buffers from block `from` in `cycle` until
// `until`, each carrying the previous one's LSN as its tail.
std::uint32_t lay_out(Bytes& log, std::uint32_t cycle, std::uint64_t from, std::uint64_t until, std::uint32_t size,
                      std::mt19937_64& rng, bool crc = true) {
  const std::uint64_t blocks = log.size() / xfs::kBasicBlock;
  xfs::Lsn tail{cycle, static_cast<std::uint32_t>(from)};
  std::uint64_t at = from;
  while (at < until) {
    const std::uint32_t max_data = std::min<std::uint32_t>(size, 64 * 512 * (size > 32768 ? size / 32768 : 1));
    const std::size_t len = 512 * (1 + rng() % (max_data / 512 / 4 + 1));
    const xfs::RecordSpec spec{at >= blocks ? cycle + 1 : cycle, static_cast<std::uint32_t>(at % blocks), tail,
                               static_cast<std::uint32_t>(1 + rng() % 300), size, crc};
    const Bytes r = xfs::build_record(spec, payload(len, rng), blocks);
    xfs::place_record(log, at % blocks, r);
    tail = {spec.cycle, spec.block};
    at += r.size() / xfs::kBasicBlock;
  }
  return static_cast<std::uint32_t>(at);
}

std::vector<nvj::fuzz::NamedInput> build_seeds() {
  std::mt19937_64 rng(11);
  std::vector<nvj::fuzz::NamedInput> seeds;
  {
    Bytes log(512 * 512, 0);
    lay_out(log, 1, 0, 300, 32768, rng);
    seeds.push_back({"in-order", log});
  }
  {
    Bytes log(512 * 512, 0);
    lay_out(log, 1, 0, 512, 32768, rng);           // a whole cycle
    lay_out(log, 2, 0, 200, 32768, rng);           // the next, over its start
    seeds.push_back({"wrapped", log});
    Bytes across(512 * 512, 0);
    lay_out(across, 1, 400, 560, 65536, rng);      // a record across the end
    seeds.push_back({"across-the-end", across});
  }
  {
    Bytes log(1024 * 512, 0);
    lay_out(log, 3, 10, 900, 262144, rng);
    seeds.push_back({"256k-buffers", log});
  }
  {
    Bytes log(256 * 512, 0);
    lay_out(log, 1, 0, 8, 32768, rng, false);  // as mkfs writes them
    lay_out(log, 1, 8, 120, 32768, rng);
    Bytes torn = log;
    fscore::store_be<std::uint32_t>(torn.data() + 118 * 512, 0);  // a block of the last record never written
    seeds.push_back({"mkfs-and-torn", torn});
  }
  return seeds;
}

class Mutator {
 public:
  explicit Mutator(std::uint64_t seed) : rng_(seed) {}
  std::uint64_t below(std::uint64_t n) { return n == 0 ? 0 : rng_() % n; }
  bool one_in(std::uint64_t n) { return below(n) == 0; }

  void mutate(Bytes& log) {
    const std::uint64_t blocks = log.size() / 512;
    if (blocks == 0) return;
    const std::uint64_t b = below(blocks);
    std::uint8_t* block = log.data() + b * 512;
    switch (below(8)) {
      case 0: case 1: {  // a header's fields
        static constexpr std::size_t kFields[] = {0, 4, 8, 12, 16, 20, 24, 28, 32, 36, 40, 300, 320};
        const std::size_t at = kFields[below(std::size(kFields))];
        static constexpr std::uint32_t kValues[] = {0, 1, 2, 3, 511, 512, 32768, 32769, 65536, 262144, 262145,
                                                    0xFEEDBABE, 0x7FFFFFFF, 0xFFFFFFFF};
        fscore::store_be<std::uint32_t>(block + at, one_in(3) ? static_cast<std::uint32_t>(rng_())
                                                              : kValues[below(std::size(kValues))]);
        break;
      }
      case 2: block[below(512)] ^= static_cast<std::uint8_t>(1u << below(8)); break;
      case 3: fscore::store_be<std::uint32_t>(block, static_cast<std::uint32_t>(below(5))); break;  // a stamp
      case 4: std::memcpy(block, log.data() + below(blocks) * 512, 512); break;
      case 5: std::memset(block, 0, 512); break;
      case 6: log.resize(below(blocks + 1) * 512 + (one_in(4) ? below(512) : 0)); break;
      default: {  // a header copied elsewhere
        Bytes copy(block, block + 512);
        std::memcpy(log.data() + below(blocks) * 512, copy.data(), 512);
      }
    }
  }

 private:
  std::mt19937_64 rng_;
};

}  // namespace

int main(int argc, char** argv) {
  namespace x = nvj::fuzz::xfs_log;
  const nvj::fuzz::LoopOptions options = nvj::fuzz::parse_loop_options("xfs_log_fuzz", argc, argv);
  nvj::fuzz::FuzzLoop loop;
  loop.name = "xfs_log_fuzz";
  loop.seeds = build_seeds();
  for (const auto& s : loop.seeds) {  // unmutated, each seed scans to whole records and a head
    const x::Outcome before = x::outcome();
    LLVMFuzzerTestOneInput(s.bytes.data(), s.bytes.size());
    const x::Outcome& after = x::outcome();
    const bool torn = s.name.find("torn") != std::string::npos;
    if (after.with_head == before.with_head || after.crc_ok == before.crc_ok || after.followed == before.followed ||
        (after.crc_failures > before.crc_failures) != torn) {
      std::fprintf(stderr, "xfs_log_fuzz: seed %s does not do what it is for\n", s.name.c_str());
      return 1;
    }
  }
  Mutator m(options.seed);
  loop.next = [&](std::vector<std::uint8_t>& input) {
    const std::size_t which = static_cast<std::size_t>(m.below(loop.seeds.size()));
    input = loop.seeds[which].bytes;
    const std::uint64_t n = m.one_in(8) ? 1 + m.below(16) : 1 + m.below(3);
    for (std::uint64_t i = 0; i < n; ++i) m.mutate(input);
    return which;
  };
  const x::Outcome start = x::outcome();
  loop.summary = [&] {
    const x::Outcome& o = x::outcome();
    const auto d = [](std::uint64_t a, std::uint64_t b) { return static_cast<unsigned long long>(a - b); };
    std::printf("  %llu inputs: %llu records (%llu CRC ok, %llu failing, %llu stale); %llu logs with a head; "
                "%llu records followed whole\n",
                d(o.inputs, start.inputs), d(o.records, start.records), d(o.crc_ok, start.crc_ok),
                d(o.crc_failures, start.crc_failures), d(o.stale, start.stale), d(o.with_head, start.with_head),
                d(o.followed, start.followed));
  };
  return nvj::fuzz::run_fuzz_loop(options, loop);
}
