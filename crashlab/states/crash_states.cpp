// SPDX-License-Identifier: BSD-3-Clause
#include "crashlab/states/crash_states.h"

#include <stdexcept>
#include <string>
#include <unordered_map>
#include <utility>

#include "crashlab/states/hash.h"
#include "crashlab/states/state_prints.h"

namespace crashlab {

namespace {

// The atomic unit a write is cut at.
std::uint64_t unit_of(const RecordingIndex& index, const StrategyOptions& options, const IndexedChange& c) {
  return options.torn_unit != 0 ? options.torn_unit : index.exports().at(c.device).atomic_unit;
}

// Draw `r` of point `p`: each volatile change kept by a coin from the seed.
void random_subset(const std::vector<std::size_t>& v, std::uint64_t seed, std::size_t p, std::uint32_t r,
                   std::vector<std::size_t>& kept) {
  kept.clear();
  std::uint64_t bits = 0;
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (i % 64 == 0) bits = hash_of(seed, p, r, i / 64);
    if ((bits >> (i % 64) & 1) != 0) kept.push_back(v[i]);
  }
}

// Sets `state`'s kept changes and torn write as `key` says (cuts: the
// torn write's, when the key is torn).
void build(const RecordingIndex& index, const std::vector<CrashPoint>& points, const StrategyOptions& options,
           const StateKey& key, CrashState& state) {
  const std::vector<std::size_t>& v = points.at(key.point).volatile_changes;
  state.key = key;
  state.point = key.point;
  state.strategy = key.strategy;
  state.torn.reset();
  const auto prefix = [&](std::size_t n) { state.kept.assign(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(n)); };
  switch (key.strategy) {
    case Strategy::none: state.kept.clear(); break;
    case Strategy::all: state.kept = v; break;
    case Strategy::keep1: state.kept.assign(1, v.at(key.a)); break;
    case Strategy::keep2: state.kept = {v.at(key.a), v.at(key.b)}; break;
    case Strategy::prefix: prefix(std::min<std::size_t>(key.a, v.size())); break;
    case Strategy::random: random_subset(v, options.seed, key.point, key.a, state.kept); break;
    case Strategy::torn: {
      const IndexedChange& c = index.changes().at(v.at(key.a));
      const auto cuts = torn_cuts(c.offset, c.length, unit_of(index, options, c), options.torn);
      prefix(key.a);
      state.torn = TornWrite{v[key.a], cuts.at(key.b)};
      break;
    }
  }
}

std::uint32_t u32(std::size_t n) { return static_cast<std::uint32_t>(n); }

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

CrashState state_of(const RecordingIndex& index, const std::vector<CrashPoint>& points, const StrategyOptions& options,
                    const StateKey& key) {
  CrashState state;
  build(index, points, options, key, state);
  return state;
}

Enumeration enumerate_crash_states(const RecordingIndex& index, const std::vector<CrashPoint>& points,
                                   const StrategyOptions& options,
                                   const std::function<void(const CrashState&)>& visit) {
  if (options.torn_unit % 512 != 0)
    throw std::invalid_argument("the atomic unit of torn writes must be a multiple of 512 bytes, not " +
                                std::to_string(options.torn_unit));
  Enumeration e;
  StatePrints prints(index, options.fingerprint_bits);
  e.fingerprints = prints.on();
  // The window's states by fingerprint: the first with it, and any other
  // whose contents differ (a collision, rare).
  std::unordered_map<std::uint64_t, StateKey> seen;
  std::unordered_multimap<std::uint64_t, StateKey> more;
  CrashState state, earlier;
  const auto is_new = [&]() {
    if (!prints.on()) return true;
    const auto [it, added] = seen.try_emplace(state.fingerprint, state.key);
    if (added) return true;
    const auto same_as = [&](const StateKey& other) {
      build(index, points, options, other, earlier);
      return prints.same(state.kept, state.torn, other.point, earlier.kept, earlier.torn);
    };
    if (same_as(it->second)) return false;
    const auto [from, to] = more.equal_range(state.fingerprint);
    for (auto m = from; m != to; ++m)
      if (same_as(m->second)) return false;
    ++e.collisions;
    more.emplace(state.fingerprint, state.key);
    return true;
  };
  std::uint64_t counter = 0;  // without fingerprints: every state its own
  const auto offer = [&](Strategy strategy, std::uint32_t a, std::uint32_t b) {
    state.key = StateKey{state.key.point, strategy, a, b};
    state.strategy = strategy;
    state.fingerprint = prints.on() ? prints.fingerprint(state.kept, state.torn) : ++counter;
    StrategyCount& count = e.by_strategy[static_cast<std::size_t>(strategy)];
    ++count.states;
    ++e.states;
    state.first = is_new();
    if (state.first) {
      ++count.unique;
      ++e.unique;
    }
    if (visit) visit(state);
  };
  std::size_t marks_seen = kNoMark;  // the last mark before the states in `seen`
  for (std::size_t p = 0; p < points.size(); ++p) {
    const std::vector<std::size_t>& v = points[p].volatile_changes;
    prints.advance(p, points[p].sequence);
    // A mark may bring a fact: the states before it were checked without
    // it, so a state after it is new even with their contents.
    if (points[p].last_mark != marks_seen) {
      seen.clear();
      more.clear();
      prints.window();
      marks_seen = points[p].last_mark;
    }
    state.key.point = u32(p);
    state.point = p;
    state.torn.reset();
    state.kept.clear();
    if (options.none) offer(Strategy::none, 0, 0);
    if (v.empty()) continue;
    if (options.all) {
      state.kept = v;
      offer(Strategy::all, 0, 0);
    }
    if (options.keep >= 1)
      for (std::size_t a = 0; a < v.size(); ++a) {
        state.kept.assign(1, v[a]);
        offer(Strategy::keep1, u32(a), 0);
      }
    if (options.keep >= 2)
      for (std::size_t a = 0; a < v.size(); ++a)
        for (std::size_t b = a + 1; b < v.size(); ++b) {
          state.kept = {v[a], v[b]};
          offer(Strategy::keep2, u32(a), u32(b));
        }
    if (options.prefix)
      for (std::size_t n = 1; n < v.size(); ++n) {
        state.kept.assign(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(n));
        offer(Strategy::prefix, u32(n), 0);
      }
    for (unsigned r = 0; r < options.random; ++r) {
      random_subset(v, options.seed, p, r, state.kept);
      offer(Strategy::random, r, 0);
    }
    for (std::size_t j = 0; options.torn > 0 && j < v.size(); ++j) {
      const IndexedChange& c = index.changes()[v[j]];
      if (c.kind != FrameKind::write) continue;
      state.kept.assign(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(j));
      const auto cuts = torn_cuts(c.offset, c.length, unit_of(index, options, c), options.torn);
      for (std::size_t k = 0; k < cuts.size(); ++k) {
        state.torn = TornWrite{v[j], cuts[k]};
        offer(Strategy::torn, u32(j), u32(k));
      }
      state.torn.reset();
    }
  }
  return e;
}

}  // namespace crashlab
