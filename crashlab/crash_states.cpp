#include "crashlab/crash_states.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>

namespace crashlab {

namespace {

constexpr std::uint64_t kSector = 512;
// Sectors the fingerprints follow at most (the bases' and every change's,
// 16 bytes each in memory): past that, no merging.
constexpr std::uint64_t kMaxSectors = std::uint64_t{4} << 20;

std::uint64_t mix(std::uint64_t x) {  // splitmix64's finaliser
  x ^= x >> 30;
  x *= 0xBF58476D1CE4E5B9u;
  x ^= x >> 27;
  x *= 0x94D049BB133111EBu;
  return x ^ (x >> 31);
}

// What a sector holds, as 64 bits; 0 for zeroes (so that a sector never
// written and one zeroed or trimmed are the same).
std::uint64_t sector_hash(const std::uint8_t* p) {
  std::uint64_t h = 0x9E3779B97F4A7C15u;
  bool zero = true;
  for (std::size_t i = 0; i < kSector; i += 8) {
    std::uint64_t w;
    std::memcpy(&w, p + i, 8);
    zero = zero && w == 0;
    h = mix(h ^ w);
  }
  return zero ? 0 : h | 1;
}

// A sector of an export, as a key.
std::uint64_t key_of(std::uint8_t device, std::uint64_t offset) {
  return std::uint64_t{device} << 56 | offset / kSector;
}

// A sector's share of a fingerprint: the fingerprint of the exports is the
// XOR of every sector's share, so a sector that changes changes it by two
// XORs. Zeroes have no share.
std::uint64_t share(std::uint64_t key, std::uint64_t hash) { return hash == 0 ? 0 : mix(key * 0xD6E8FEB86659FD93u ^ hash); }

// The fingerprint of the durable contents at the current point, kept up to
// date as changes become durable, and of a state on top of it.
class Prints {
 public:
  explicit Prints(const RecordingIndex& index) : index_(index) {
    const auto aligned = [](std::uint64_t offset, std::uint64_t length) {
      return offset % kSector == 0 && length % kSector == 0;
    };
    std::uint64_t sectors = 0;
    for (const IndexedBase& b : index.bases()) {
      on_ = on_ && aligned(b.offset, b.data.size());
      sectors += b.data.size() / kSector;
    }
    for (const IndexedChange& c : index.changes()) {
      on_ = on_ && aligned(c.offset, c.length);
      sectors += c.length / kSector;
    }
    on_ = on_ && sectors <= kMaxSectors;
    if (!on_) return;
    for (const IndexedBase& b : index.bases())
      for (std::uint64_t at = 0; at < b.data.size(); at += kSector)
        land(key_of(b.device, b.offset + at), 0, sector_hash(b.data.data() + at));
    sectors_.resize(index.changes().size());
    for (std::size_t i = 0; i < index.changes().size(); ++i) {
      const IndexedChange& c = index.changes()[i];
      auto& s = sectors_[i];
      s.reserve(c.length / kSector);
      for (std::uint64_t at = 0; at < c.length; at += kSector)
        s.emplace_back(key_of(c.device, c.offset + at), c.kind == FrameKind::write ? sector_hash(c.data.data() + at) : 0);
    }
  }

  bool on() const { return on_; }

  // The changes durable right after frame `sequence` join the durable contents.
  void advance(std::uint64_t sequence) {
    if (!on_) return;
    const std::vector<std::size_t>& order = index_.durable_order();
    for (; next_ < order.size() && index_.changes()[order[next_]].durable <= sequence; ++next_) {
      const std::size_t i = order[next_];
      for (const auto& [key, hash] : sectors_[i]) land(key, index_.changes()[i].sequence, hash);
    }
  }

  // The durable contents with `kept` on top, each in the recording's order,
  // and the first bytes of `torn` (sent after them) on top of those.
  std::uint64_t of(const std::vector<std::size_t>& kept, const std::optional<TornWrite>& torn) {
    if (!on_) return ++unique_;
    std::uint64_t print = print_;
    winners_.clear();
    for (const std::size_t i : kept)  // in the recording's order: a later one wins
      for (const auto& [key, hash] : sectors_[i]) winners_[key] = {index_.changes()[i].sequence, hash};
    if (torn) {
      const auto& sectors = sectors_[torn->change];
      for (std::size_t k = 0; k < torn->bytes / kSector && k < sectors.size(); ++k)
        winners_[sectors[k].first] = {index_.changes()[torn->change].sequence, sectors[k].second};
    }
    for (const auto& [key, winner] : winners_) {
      const auto it = durable_.find(key);
      const std::uint64_t durable_sequence = it == durable_.end() ? 0 : it->second.first;
      const std::uint64_t durable_hash = it == durable_.end() ? 0 : it->second.second;
      if (winner.first > durable_sequence) print ^= share(key, durable_hash) ^ share(key, winner.second);
    }
    return print;
  }

 private:
  // A sector takes `hash` from a change sent at `sequence`, unless a later
  // one already holds it.
  void land(std::uint64_t key, std::uint64_t sequence, std::uint64_t hash) {
    auto [it, added] = durable_.try_emplace(key, sequence, hash);
    if (!added) {
      if (it->second.first > sequence) return;
      print_ ^= share(key, it->second.second);
      it->second = {sequence, hash};
    }
    print_ ^= share(key, hash);
  }

  const RecordingIndex& index_;
  bool on_ = true;
  std::uint64_t print_ = 0;
  std::uint64_t unique_ = 0;  // without fingerprints: every state its own
  std::vector<std::vector<std::pair<std::uint64_t, std::uint64_t>>> sectors_;  // per change: (key, hash)
  std::unordered_map<std::uint64_t, std::pair<std::uint64_t, std::uint64_t>> durable_;  // key -> (sequence, hash)
  std::size_t next_ = 0;  // in durable_order()
  std::unordered_map<std::uint64_t, std::pair<std::uint64_t, std::uint64_t>> winners_;
};

std::uint64_t random_bits(std::uint64_t& state) {
  state += 0x9E3779B97F4A7C15u;
  return mix(state);
}

}  // namespace

std::vector<std::uint64_t> torn_cuts(std::uint64_t offset, std::uint64_t length, std::uint64_t unit, unsigned most) {
  std::vector<std::uint64_t> cuts;
  if (length == 0 || unit == 0 || most == 0) return cuts;
  const std::uint64_t first = (offset / unit + 1) * unit;            // the first boundary after its start
  const std::uint64_t inside = (offset + length - 1) / unit - offset / unit;  // boundaries strictly inside
  const std::uint64_t m = std::min<std::uint64_t>(most, inside);
  for (std::uint64_t i = 1; i <= m; ++i) cuts.push_back(first + (i * (inside + 1) / (m + 1) - 1) * unit - offset);
  return cuts;
}

std::uint64_t fingerprint_of(const ReplayedExports& exports, std::size_t count) {
  std::uint64_t print = 0;
  std::uint8_t sector[kSector];
  for (std::size_t d = 0; d < count; ++d) {
    const auto device = static_cast<std::uint8_t>(d);
    for (std::uint64_t at = 0; at + kSector <= exports.size(device); at += kSector) {
      exports.read(device, at, sector);
      print ^= share(key_of(device, at), sector_hash(sector));
    }
  }
  return print;
}

const char* to_string(Strategy strategy) {
  switch (strategy) {
    case Strategy::none: return "none";
    case Strategy::all: return "all";
    case Strategy::keep1: return "keep1";
    case Strategy::keep2: return "keep2";
    case Strategy::prefix: return "prefix";
    case Strategy::random: return "random";
    case Strategy::torn: return "torn";
  }
  return "unknown";
}

Enumeration enumerate_crash_states(const RecordingIndex& index, const std::vector<CrashPoint>& points,
                                   const StrategyOptions& options,
                                   const std::function<void(const CrashState&)>& visit) {
  if (options.torn_unit % kSector != 0)
    throw std::invalid_argument("the atomic unit of torn writes must be a multiple of 512 bytes, not " +
                                std::to_string(options.torn_unit));
  Enumeration e;
  Prints prints(index);
  e.fingerprints = prints.on();
  std::unordered_set<std::uint64_t> seen;
  CrashState state;
  const auto offer = [&](Strategy strategy) {
    state.strategy = strategy;
    state.fingerprint = prints.of(state.kept, state.torn);
    StrategyCount& count = e.by_strategy[static_cast<std::size_t>(strategy)];
    ++count.states;
    ++e.states;
    state.first = seen.insert(state.fingerprint).second;
    if (state.first) {
      ++count.unique;
      ++e.unique;
    }
    if (visit) visit(state);
  };
  std::size_t marks_seen = kNoMark;  // the last mark before the states in `seen`
  for (std::size_t p = 0; p < points.size(); ++p) {
    const std::vector<std::size_t>& v = points[p].volatile_changes;
    prints.advance(points[p].sequence);
    // A mark may bring a fact: the states before it were checked without
    // it, so a state after it is new even with their contents.
    if (points[p].last_mark != marks_seen) {
      seen.clear();
      marks_seen = points[p].last_mark;
    }
    state.point = p;
    state.kept.clear();
    if (options.none) offer(Strategy::none);
    if (v.empty()) continue;
    if (options.all) {
      state.kept = v;
      offer(Strategy::all);
    }
    if (options.keep >= 1)
      for (const std::size_t a : v) {
        state.kept.assign(1, a);
        offer(Strategy::keep1);
      }
    if (options.keep >= 2)
      for (std::size_t a = 0; a < v.size(); ++a)
        for (std::size_t b = a + 1; b < v.size(); ++b) {
          state.kept = {v[a], v[b]};
          offer(Strategy::keep2);
        }
    if (options.prefix)
      for (std::size_t n = 1; n < v.size(); ++n) {
        state.kept.assign(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(n));
        offer(Strategy::prefix);
      }
    for (unsigned r = 0; r < options.random; ++r) {
      std::uint64_t bits_state = mix(options.seed ^ mix(p * 0x100000001B3u + r));
      state.kept.clear();
      std::uint64_t bits = 0;
      for (std::size_t i = 0; i < v.size(); ++i) {
        if (i % 64 == 0) bits = random_bits(bits_state);
        if ((bits >> (i % 64) & 1) != 0) state.kept.push_back(v[i]);
      }
      offer(Strategy::random);
    }
    for (std::size_t j = 0; options.torn > 0 && j < v.size(); ++j) {
      const IndexedChange& c = index.changes()[v[j]];
      if (c.kind != FrameKind::write) continue;
      state.kept.assign(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(j));
      const std::uint64_t unit = options.torn_unit != 0 ? options.torn_unit : index.exports().at(c.device).atomic_unit;
      for (const std::uint64_t bytes : torn_cuts(c.offset, c.length, unit, options.torn)) {
        state.torn = TornWrite{v[j], bytes};
        offer(Strategy::torn);
      }
      state.torn.reset();
    }
  }
  return e;
}

}  // namespace crashlab
