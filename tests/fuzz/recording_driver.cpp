// SPDX-License-Identifier: BSD-3-Clause
// A driver for the recording reader's fuzz target (recording_fuzz.cpp): it
// builds valid recordings with FrameEncoder (every kind of frame, durable
// and volatile acknowledgements, flushes that complete and one that does
// not, a failed change, pads, facts; one stopped by an error), then mutates
// them deterministically from a seed: bytes flipped, set or cut off, and
// whole frames edited with their checksum made to match again (a field
// changed, a frame dropped, repeated or moved, sequence numbers redone), so
// that the checks past the checksum are reached. The command line and the
// loop: fuzz_loop.h.
#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "fscore/crc32c.h"
#include "fscore/endian.h"
#include "fscore/record/frame_encoder.h"
#include "tests/fuzz/fuzz_loop.h"
#include "tests/fuzz/recording_fuzz.h"

namespace {

namespace rec = fscore::record;
using Bytes = std::vector<std::uint8_t>;

Bytes bytes_of(const rec::FrameBuffer& b) { return Bytes(b.data(), b.data() + b.size()); }

Bytes fill(std::size_t n, std::uint8_t salt) {
  Bytes out(n);
  for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<std::uint8_t>(i * 7 + salt);
  return out;
}

std::vector<nvj::fuzz::NamedInput> build_seeds() {
  std::vector<nvj::fuzz::NamedInput> seeds;
  {
    rec::FrameEncoder e;
    rec::FrameBuffer out;
    e.header(out, {{"data", 1 << 20}, {"journal", 256 << 10}});
    e.base(out, 0, 0, fill(8192, 1).data(), 8192);
    e.write(out, 0, 1, 4096, fill(4096, 2).data(), 4096, false);
    e.write(out, 1, 2, 0, fill(1024, 3).data(), 1024, false);
    e.ack(out, 1, 2, true);
    e.ack(out, 0, 1, false);
    e.flush(out, 0, 3);
    e.zero(out, 0, 4, 65536, 8192, false);
    e.flush_done(out, 0, 3);
    e.mark(out, 1000, "fact file d0/t0 size 4096 crc32c 0badf00d");
    e.trim(out, 0, 5, 131072, 65536, true);
    e.ack(out, 0, 5, true);
    e.ack(out, 0, 4, false);
    e.pad(out, out.size(), 4096);
    e.write(out, 0, 6, 4096, fill(512, 4).data(), 512, false);
    e.flush(out, 0, 7);
    e.mark(out, 2000, "after");
    e.end(out);
    seeds.push_back({"ordered", bytes_of(out)});
  }
  {
    rec::FrameEncoder e;
    rec::FrameBuffer out;
    e.header(out, {{"data", 64 << 10}});
    e.write(out, 0, 1, 0, fill(4096, 5).data(), 4096, true);
    e.write(out, 0, 2, 4096, fill(4096, 6).data(), 4096, false);
    e.failed(out, 0, 2);
    e.ack(out, 0, 1, true);
    e.write(out, 0, 3, 100, fill(10, 7).data(), 10, false);  // off the sectors
    e.end(out, "the recording could not keep up");
    seeds.push_back({"stopped", bytes_of(out)});
  }
  return seeds;
}

// Where each frame starts, walking the payload lengths (until they stop
// making sense).
std::vector<std::size_t> frame_starts(const Bytes& b) {
  std::vector<std::size_t> starts;
  for (std::size_t at = 0; at + 20 <= b.size();) {
    starts.push_back(at);
    const std::size_t whole = 20 + fscore::load_le<std::uint32_t>(b.data() + at + 4);
    if (whole > b.size() - at) break;
    at += whole;
  }
  return starts;
}

std::size_t frame_size(const Bytes& b, std::size_t at) { return 20 + fscore::load_le<std::uint32_t>(b.data() + at + 4); }

void fix_crc(Bytes& b, std::size_t at) {
  const std::size_t covered = frame_size(b, at) - 4;
  if (at + covered + 4 > b.size()) return;
  fscore::store_le<std::uint32_t>(b.data() + at + covered, ~fscore::crc32c(~0u, b.data() + at, covered));
}

// Sequence numbers 0, 1, 2, ... again, and every checksum mended.
void renumber(Bytes& b) {
  std::uint64_t sequence = 0;
  for (const std::size_t at : frame_starts(b)) {
    if (at + frame_size(b, at) > b.size()) break;
    fscore::store_le<std::uint64_t>(b.data() + at + 8, sequence++);
    fix_crc(b, at);
  }
}

class Mutator {
 public:
  explicit Mutator(std::uint64_t seed) : rng_(seed) {}
  std::uint64_t below(std::uint64_t n) { return n == 0 ? 0 : rng_() % n; }
  bool one_in(std::uint64_t n) { return below(n) == 0; }

  void mutate(Bytes& b) {
    const auto starts = frame_starts(b);
    if (starts.empty() || b.empty()) return;
    const std::size_t at = starts[below(starts.size())];
    const std::size_t size = std::min(frame_size(b, at), b.size() - at);
    switch (below(9)) {
      case 0:  // a bit anywhere
        b[below(b.size())] ^= static_cast<std::uint8_t>(1u << below(8));
        break;
      case 1:  // cut off
        b.resize(below(b.size()));
        break;
      case 2: {  // a field of one frame, checksum mended
        const std::size_t field = below(std::min<std::size_t>(size, 40));
        b[at + field] = one_in(2) ? static_cast<std::uint8_t>(below(256)) : static_cast<std::uint8_t>(b[at + field] + 1);
        if (one_in(4)) fscore::store_le<std::uint32_t>(b.data() + at + 4, static_cast<std::uint32_t>(rng_()));
        fix_crc(b, at);
        break;
      }
      case 3:  // an id or offset of one frame set to an edge, checksum mended
        if (size >= 32) {
          const std::uint64_t edges[] = {0, 1, ~std::uint64_t{0}, std::uint64_t{1} << 20, 4095, 7};
          fscore::store_le<std::uint64_t>(b.data() + at + 16 + 8 * below(2), edges[below(6)]);
          fix_crc(b, at);
        }
        break;
      case 4:  // a frame dropped, sequence numbers redone
        b.erase(b.begin() + static_cast<std::ptrdiff_t>(at), b.begin() + static_cast<std::ptrdiff_t>(at + size));
        if (one_in(2)) renumber(b);
        break;
      case 5: {  // a frame repeated
        const Bytes frame(b.begin() + static_cast<std::ptrdiff_t>(at), b.begin() + static_cast<std::ptrdiff_t>(at + size));
        b.insert(b.begin() + static_cast<std::ptrdiff_t>(at), frame.begin(), frame.end());
        if (one_in(2)) renumber(b);
        break;
      }
      case 6: {  // a frame moved to the end's place
        const Bytes frame(b.begin() + static_cast<std::ptrdiff_t>(at), b.begin() + static_cast<std::ptrdiff_t>(at + size));
        b.erase(b.begin() + static_cast<std::ptrdiff_t>(at), b.begin() + static_cast<std::ptrdiff_t>(at + size));
        const auto again = frame_starts(b);
        const std::size_t to = again.empty() ? 0 : again[below(again.size())];
        b.insert(b.begin() + static_cast<std::ptrdiff_t>(to), frame.begin(), frame.end());
        renumber(b);
        break;
      }
      case 7:  // the kind of one frame, checksum mended
        b[at] = static_cast<std::uint8_t>(one_in(3) ? below(256) : 1 + below(12));
        fix_crc(b, at);
        break;
      default:  // the flags
        b[at + 2] = static_cast<std::uint8_t>(below(4));
        fix_crc(b, at);
    }
  }

 private:
  std::mt19937_64 rng_;
};

}  // namespace

int main(int argc, char** argv) {
  namespace rf = nvj::fuzz::recording;
  const nvj::fuzz::LoopOptions options = nvj::fuzz::parse_loop_options("recording_fuzz", argc, argv);
  nvj::fuzz::FuzzLoop loop;
  loop.name = "recording_fuzz";
  loop.seeds = build_seeds();
  for (const auto& s : loop.seeds) {
    // Unmutated, every seed reads whole: else the fuzzing starts nowhere.
    const rf::Outcome before = rf::outcome();
    LLVMFuzzerTestOneInput(s.bytes.data(), s.bytes.size());
    if (rf::outcome().read != before.read + 1) {
      std::fprintf(stderr, "recording_fuzz: seed %s does not read\n", s.name.c_str());
      return 1;
    }
  }
  Mutator m(options.seed);
  loop.next = [&](std::vector<std::uint8_t>& input) {
    const std::size_t which = static_cast<std::size_t>(m.below(loop.seeds.size()));
    input = loop.seeds[which].bytes;
    const std::uint64_t n = m.one_in(8) ? 1 + m.below(8) : 1 + m.below(2);
    for (std::uint64_t i = 0; i < n; ++i) m.mutate(input);
    return which;
  };
  const rf::Outcome start = rf::outcome();
  loop.summary = [&] {
    const rf::Outcome& o = rf::outcome();
    std::printf("  %llu inputs: %llu refused, %llu read whole (%llu crash states)\n",
                static_cast<unsigned long long>(o.inputs - start.inputs),
                static_cast<unsigned long long>(o.refused - start.refused),
                static_cast<unsigned long long>(o.read - start.read),
                static_cast<unsigned long long>(o.states - start.states));
  };
  return nvj::fuzz::run_fuzz_loop(options, loop);
}
