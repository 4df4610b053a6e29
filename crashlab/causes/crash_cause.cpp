// SPDX-License-Identifier: BSD-3-Clause
#include "crashlab/causes/crash_cause.h"

#include <algorithm>
#include <set>
#include <utility>

#include "fscore/ext4/image_reader.h"
#include "fscore/ext4/journal_replay.h"
#include "fscore/ext4/tree_reader.h"
#include "crashlab/judge/fast_path.h"

namespace crashlab {

const char* to_string(Region region) {
  switch (region) {
    case Region::journal: return "journal";
    case Region::checkpoint: return "checkpoint";
    case Region::data: return "data";
    case Region::other: return "other";
  }
  return "unknown";
}

namespace {

// The verdict on the state `in.image` holds now: the judge's, or the fast
// path's.
StateVerdict check_image(const CauseInputs& in) {
  if (in.judge) return in.judge();
  auto& fs = in.image.exported(in.data);
  auto* journal = in.journal ? &in.image.exported(*in.journal) : nullptr;
  return check_ext4_state(fs, fs, journal, journal, in.oracle, in.now, in.recovery, in.memo);
}

class Minimizer {
 public:
  Minimizer(const CauseInputs& in, const CrashPoint& point, const CrashState& state, std::uint64_t budget)
      : in_(in), point_(point), state_(state), budget_(budget) {}

  // Whether dropping exactly `drop` (and keeping every other volatile
  // change, the torn one torn) fails.
  bool fails(const std::vector<std::size_t>& drop) {
    ++checks_;
    in_.image.set_state(kept_without(point_, state_, drop), state_.torn);
    return check_image(in_).verdict != Verdict::pass;
  }
  // Whether it fails with every volatile change kept whole, the torn one too.
  bool fails_whole() {
    ++checks_;
    in_.image.set_state(point_.volatile_changes);
    return check_image(in_).verdict != Verdict::pass;
  }
  bool spent() const { return checks_ >= budget_; }
  std::uint64_t checks() const { return checks_; }

 private:
  const CauseInputs& in_;
  const CrashPoint& point_;
  const CrashState& state_;
  std::uint64_t budget_;
  std::uint64_t checks_ = 0;
};

std::vector<std::vector<std::size_t>> split(const std::vector<std::size_t>& set, std::size_t n) {
  std::vector<std::vector<std::size_t>> parts(n);
  for (std::size_t i = 0; i < set.size(); ++i) parts[i * n / set.size()].push_back(set[i]);
  return parts;
}

std::vector<std::size_t> without(const std::vector<std::size_t>& set, const std::vector<std::size_t>& part) {
  std::vector<std::size_t> out;
  std::set_difference(set.begin(), set.end(), part.begin(), part.end(), std::back_inserter(out));
  return out;
}

bool overlaps(std::uint64_t a, std::uint64_t a_end, std::uint64_t b, std::uint64_t b_end) { return a < b_end && b < a_end; }

// The regions of the cause's changes, read from the state with every
// volatile change kept (what the image holds after minimizing).
std::vector<Region> classify(const CauseInputs& in, const CrashPoint& point, const std::vector<std::size_t>& cause,
                             const std::vector<std::string>& broken_paths) {
  in.image.set_state(point.volatile_changes);
  auto& fs = in.image.exported(in.data);
  std::vector<std::pair<std::uint64_t, std::uint64_t>> journal_bytes, home_bytes, data_bytes;
  if (!in.judge) {  // ext4: the journal's blocks, the replay's and the broken files'
    try {
      const fscore::ext4::ImageInfo info = fscore::ext4::read_image(fs);
      const std::uint64_t bs = info.block_size;
      for (const auto& run : info.journal_runs) journal_bytes.emplace_back(run.start * bs, (run.start + run.count) * bs);
      if (info.journal != fscore::ext4::JournalKind::kNone) {
        auto* jx = in.journal ? &in.image.exported(*in.journal) : nullptr;
        fscore::ext4::ImageAccess access{fs, fs};
        std::optional<fscore::ext4::ImageAccess> journal_access;
        if (info.journal == fscore::ext4::JournalKind::kExternal && jx != nullptr) journal_access.emplace(fscore::ext4::ImageAccess{*jx, *jx});
        const fscore::ext4::ReplayReport r = fscore::ext4::replay_journal_like_e2fsck(access, journal_access ? &*journal_access : nullptr, in.now, in.recovery);
        for (const std::uint64_t b : r.result.written) home_bytes.emplace_back(b * bs, (b + 1) * bs);
      }
      const fscore::ext4::TreeReader tree(fs);
      for (const std::string& path : broken_paths)
        if (const auto found = tree.lookup(path))
          if ((found->inode.mode & fscore::ext4::kModeTypeMask) == fscore::ext4::kModeRegular)
            for (const fscore::ext4::Extent& x : tree.extents(*found, found->inode.size))
              data_bytes.emplace_back(x.physical * bs, (x.physical + x.length) * bs);
    } catch (const std::exception&) {  // an unreadable state: what could be placed is placed
    }
  }
  const auto hits = [](const auto& ranges, std::uint64_t from, std::uint64_t to) {
    return std::any_of(ranges.begin(), ranges.end(), [&](const auto& r) { return overlaps(from, to, r.first, r.second); });
  };
  std::vector<Region> regions;
  for (const std::size_t i : cause) {
    const IndexedChange& c = in.index.changes()[i];
    const std::uint64_t from = c.offset, to = c.offset + c.length;
    if (c.device != in.data || hits(journal_bytes, from, to))
      regions.push_back(c.device == in.data || (in.journal && c.device == *in.journal) ? Region::journal : Region::other);
    else if (hits(home_bytes, from, to))
      regions.push_back(Region::checkpoint);
    else if (hits(data_bytes, from, to))
      regions.push_back(Region::data);
    else
      regions.push_back(Region::other);
  }
  return regions;
}

// The paths whose facts break with only `dropped` dropped (the torn write
// torn).
std::vector<std::string> paths_broken(const CauseInputs& in, const CrashPoint& point, const CrashState& state,
                                      const std::vector<std::size_t>& dropped) {
  in.image.set_state(kept_without(point, state, dropped), state.torn);
  std::vector<std::string> broken;
  for (const auto& v : check_image(in).violations) broken.push_back(v.path);
  return broken;
}

}  // namespace

std::vector<std::size_t> kept_without(const CrashPoint& point, const CrashState& state,
                                      const std::vector<std::size_t>& dropped) {
  std::vector<std::size_t> kept = without(point.volatile_changes, dropped);
  if (state.torn) kept = without(kept, {state.torn->change});
  return kept;
}

CrashCause minimize_cause(const CauseInputs& in, const CrashPoint& point, const CrashState& state, std::uint64_t budget) {
  CrashCause cause;
  Minimizer m(in, point, state, budget);
  std::vector<std::size_t> dropped = without(point.volatile_changes, state.kept);
  if (state.torn) dropped = without(dropped, {state.torn->change});
  // Does a lost write break it at all? Kept everything (the torn write
  // torn): still failing means no, or that the tear alone does.
  if (dropped.empty() || m.fails({})) {
    // The tear is the cause only if keeping that write whole mends it.
    if (state.torn && !m.fails_whole()) {
      cause.found = cause.torn = true;
      cause.torn_region = classify(in, point, {state.torn->change}, paths_broken(in, point, state, {})).front();
    }
    cause.checks = m.checks();
    return cause;
  }
  cause.found = true;
  cause.torn = state.torn.has_value();
  std::size_t n = 2;
  while (dropped.size() >= 2 && !m.spent()) {
    bool reduced = false;
    const auto parts = split(dropped, std::min(n, dropped.size()));
    for (const auto& part : parts)
      if (!m.spent() && m.fails(part)) {
        dropped = part;
        n = 2;
        reduced = true;
        break;
      }
    if (!reduced && parts.size() > 2)
      for (const auto& part : parts) {
        const auto rest = without(dropped, part);
        if (!m.spent() && m.fails(rest)) {
          dropped = rest;
          n = std::max<std::size_t>(n - 1, 2);
          reduced = true;
          break;
        }
      }
    if (!reduced) {
      if (n >= dropped.size()) break;
      n = std::min(n * 2, dropped.size());
    }
  }
  cause.minimal = !m.spent();
  // The facts the cause breaks, for the data region: from dropping it alone.
  const std::vector<std::string> broken = paths_broken(in, point, state, dropped);
  cause.checks = m.checks();
  cause.dropped = dropped;
  if (state.torn) {
    std::vector<std::size_t> with_torn = dropped;
    with_torn.push_back(state.torn->change);
    std::vector<Region> regions = classify(in, point, with_torn, broken);
    cause.torn_region = regions.back();
    regions.pop_back();
    cause.regions = regions;
  } else {
    cause.regions = classify(in, point, dropped, broken);
  }
  return cause;
}

}  // namespace crashlab
