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

namespace {

// One enumeration: the states of every point in order, each offered once
// with whether its contents are new in its window (the states since the
// last mark).
class Enumerator {
 public:
  Enumerator(const RecordingIndex& index, const std::vector<CrashPoint>& points, const StrategyOptions& options,
             const std::function<void(const CrashState&)>& visit)
      : index_(index), points_(points), options_(options), visit_(visit), prints_(index, options.fingerprint_bits) {
    e_.fingerprints = prints_.on();
  }

  Enumeration run() {
    for (std::size_t p = 0; p < points_.size(); ++p) at_point(p);
    return e_;
  }

 private:
  void at_point(std::size_t p) {
    prints_.advance(p, points_[p].sequence);
    // A mark may bring a fact: the states before it were checked without
    // it, so a state after it is new even with their contents.
    if (points_[p].last_mark != marks_seen_) {
      seen_.clear();
      more_.clear();
      prints_.window();
      marks_seen_ = points_[p].last_mark;
    }
    state_.key.point = u32(p);
    state_.point = p;
    state_.torn.reset();
    state_.kept.clear();
    if (options_.none) offer(Strategy::none, 0, 0);
    const std::vector<std::size_t>& v = points_[p].volatile_changes;
    if (v.empty()) return;
    if (options_.all) {
      state_.kept = v;
      offer(Strategy::all, 0, 0);
    }
    subsets(v);
    for (unsigned r = 0; r < options_.random; ++r) {
      random_subset(v, options_.seed, p, r, state_.kept);
      offer(Strategy::random, r, 0);
    }
    torn(v);
  }

  // keep1, keep2 and prefix.
  void subsets(const std::vector<std::size_t>& v) {
    if (options_.keep >= 1)
      for (std::size_t a = 0; a < v.size(); ++a) {
        state_.kept.assign(1, v[a]);
        offer(Strategy::keep1, u32(a), 0);
      }
    if (options_.keep >= 2)
      for (std::size_t a = 0; a < v.size(); ++a)
        for (std::size_t b = a + 1; b < v.size(); ++b) {
          state_.kept = {v[a], v[b]};
          offer(Strategy::keep2, u32(a), u32(b));
        }
    if (options_.prefix)
      for (std::size_t n = 1; n < v.size(); ++n) {
        state_.kept.assign(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(n));
        offer(Strategy::prefix, u32(n), 0);
      }
  }

  // Each volatile write cut at atomic units, after the changes sent before it.
  void torn(const std::vector<std::size_t>& v) {
    for (std::size_t j = 0; options_.torn > 0 && j < v.size(); ++j) {
      const IndexedChange& c = index_.changes()[v[j]];
      if (c.kind != FrameKind::write) continue;
      state_.kept.assign(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(j));
      const auto cuts = torn_cuts(c.offset, c.length, unit_of(index_, options_, c), options_.torn);
      for (std::size_t k = 0; k < cuts.size(); ++k) {
        state_.torn = TornWrite{v[j], cuts[k]};
        offer(Strategy::torn, u32(j), u32(k));
      }
      state_.torn.reset();
    }
  }

  void offer(Strategy strategy, std::uint32_t a, std::uint32_t b) {
    state_.key = StateKey{state_.key.point, strategy, a, b};
    state_.strategy = strategy;
    state_.fingerprint = prints_.on() ? prints_.fingerprint(state_.kept, state_.torn) : ++counter_;
    StrategyCount& count = e_.by_strategy[static_cast<std::size_t>(strategy)];
    ++count.states;
    ++e_.states;
    state_.first = is_new();
    if (state_.first) {
      ++count.unique;
      ++e_.unique;
    }
    if (visit_) visit_(state_);
  }

  // Whether no earlier state of the window holds the same contents: a
  // fingerprint seen before is verified sector by sector.
  bool is_new() {
    if (!prints_.on()) return true;
    const auto [it, added] = seen_.try_emplace(state_.fingerprint, state_.key);
    if (added) return true;
    if (same_as(it->second)) return false;
    const auto [from, to] = more_.equal_range(state_.fingerprint);
    for (auto m = from; m != to; ++m)
      if (same_as(m->second)) return false;
    ++e_.collisions;
    more_.emplace(state_.fingerprint, state_.key);
    return true;
  }

  bool same_as(const StateKey& other) {
    build(index_, points_, options_, other, earlier_);
    return prints_.same(state_.kept, state_.torn, other.point, earlier_.kept, earlier_.torn);
  }

  const RecordingIndex& index_;
  const std::vector<CrashPoint>& points_;
  const StrategyOptions& options_;
  const std::function<void(const CrashState&)>& visit_;
  StatePrints prints_;
  Enumeration e_;
  // The window's states by fingerprint: the first with it, and any other
  // whose contents differ (a collision, rare).
  std::unordered_map<std::uint64_t, StateKey> seen_;
  std::unordered_multimap<std::uint64_t, StateKey> more_;
  CrashState state_, earlier_;
  std::uint64_t counter_ = 0;           // without fingerprints: every state its own
  std::size_t marks_seen_ = kNoMark;    // the last mark before the states in `seen_`
};

}  // namespace

Enumeration enumerate_crash_states(const RecordingIndex& index, const std::vector<CrashPoint>& points,
                                   const StrategyOptions& options,
                                   const std::function<void(const CrashState&)>& visit) {
  if (options.torn_unit % 512 != 0)
    throw std::invalid_argument("the atomic unit of torn writes must be a multiple of 512 bytes, not " +
                                std::to_string(options.torn_unit));
  return Enumerator(index, points, options, visit).run();
}

}  // namespace crashlab
