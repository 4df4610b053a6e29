#include "crashlab/crash_check.h"

#include <stdexcept>
#include <string>

#include "crashlab/crash_image.h"

namespace crashlab {

std::vector<std::optional<Fact>> facts_of(const RecordingIndex& index) {
  std::vector<std::optional<Fact>> facts;
  facts.reserve(index.marks().size());
  for (std::size_t i = 0; i < index.marks().size(); ++i) {
    try {
      facts.push_back(parse_fact(index.marks()[i].label));
    } catch (const FactError& e) {
      throw std::runtime_error("mark " + std::to_string(i + 1) + " (frame " +
                               std::to_string(index.marks()[i].sequence) + "): " + e.what());
    }
  }
  return facts;
}

CrashChecker::CrashChecker(const RecordingIndex& index, const CheckOptions& options)
    : index_(index), options_(options), points_(crash_points(index, options.points)), facts_(facts_of(index)) {
  if (options.shards == 0 || options.shard >= options.shards)
    throw std::invalid_argument("shard " + std::to_string(options.shard) + " of " + std::to_string(options.shards) +
                                ": the index must be below the count");
  counted_ = enumerate_crash_states(index, points_, options.strategies, {});
}

std::uint64_t CrashChecker::share() const {
  const std::uint64_t u = counted_.unique, blocks = u / kShardBlock, n = options_.shards, i = options_.shard;
  std::uint64_t states = (blocks / n + (i < blocks % n ? 1 : 0)) * kShardBlock;
  if (blocks % n == i) states += u % kShardBlock;  // the last, partial block
  return states;
}


Enumeration CrashChecker::walk(const std::function<void(StateContext&)>& visit) const {
  CrashImage image(index_);
  const std::uint8_t data = image.find("data").value_or(0);
  const std::optional<std::uint8_t> journal = image.find("journal");
  FactOracle oracle;
  std::size_t next_mark = 0;  // facts folded into the oracle: those of marks before it
  std::uint64_t ordinal = 0;
  return enumerate_crash_states(index_, points_, options_.strategies, [&](const CrashState& state) {
    if (!state.first) return;
    const std::uint64_t mine = ordinal++;
    if (!this->mine(mine)) return;
    const CrashPoint& point = points_[state.point];
    image.advance(point.sequence);
    const std::size_t marks = point.last_mark == kNoMark ? 0 : point.last_mark + 1;
    for (; next_mark < marks; ++next_mark)
      if (facts_[next_mark]) oracle.add(*facts_[next_mark]);
    image.set_state(state.kept, state.torn);
    StateContext context{mine, state, point, image, data, journal, oracle};
    visit(context);
  });
}

CheckTotals CrashChecker::run(const std::function<void(const CheckedState&)>& on_state) const {
  CheckTotals totals;
  ContentCache cache;
  totals.enumeration = walk([&](StateContext& c) {
    CrashImage::Export& fs = c.image.exported(c.data);
    CrashImage::Export* journal = c.journal ? &c.image.exported(*c.journal) : nullptr;
    CheckedState checked;
    checked.ordinal = c.ordinal;
    checked.state = &c.state;
    checked.point = &c.point;
    checked.verdict = check_ext4_state(fs, fs, journal, journal, c.oracle, options_.now, &cache);
    ++totals.checked;
    ++totals.by_verdict[static_cast<std::size_t>(checked.verdict.verdict)];
    if (on_state) on_state(checked);
  });
  return totals;
}

}  // namespace crashlab
