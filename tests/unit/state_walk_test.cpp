// SPDX-License-Identifier: BSD-3-Clause
// The crash lab's check without a kernel (crashlab/judge/state_walk.h,
// crashlab/causes/crash_cause.h, crashlab/states/state_sample.h): ext4 workloads recorded by
// tests/support/ext4_workload.h (fscore's own filesystem, jbd2
// transactions, facts), checked by the fast path.
//   - an honest workload passes in every state, its journal on an export of
//     its own or inside the data export, the journal replayed where it
//     holds something;
//   - a workload that posts its facts before its data is flushed fails
//     exactly in the states that drop that data, and each failing state's
//     minimized cause is the data of the files whose facts broke;
//   - shards split the states taken into disjoint parts that cover them,
//     and the walk over a shard sees the verdicts the whole walk sees;
//   - a walk goes in rounds: every state once, the first round spread over
//     the recording, and it stops when told;
//   - a budget takes a sample over every crash point and strategy;
//   - a signature drops the numbers, and a checker's findings but the first.
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "crashlab/causes/crash_cause.h"
#include "crashlab/judge/state_walk.h"
#include "crashlab/states/crash_image.h"
#include "crashlab/facts/fact_checker.h"
#include "crashlab/causes/signature.h"
#include "fscore/ext4/journal_replay.h"
#include "crashlab/states/state_sample.h"
#include "tests/support/ext4_workload.h"

namespace state_walk_test {

using namespace crashlab;
using nvj::test::Ext4Workload;
using nvj::test::Ext4WorkloadOptions;

namespace {

StateVerdict fast_path(StateContext& c) {
  auto& fs = c.image.exported(c.data);
  auto* journal = c.journal ? &c.image.exported(*c.journal) : nullptr;
  return check_ext4_state(fs, fs, journal, journal, c.oracle, 1700001000, {}, &c.memo);
}

// Every state's verdict by ordinal, walking the shard.
std::map<std::uint64_t, Verdict> verdicts(const CrashChecker& checker) {
  std::map<std::uint64_t, Verdict> out;
  checker.walk([&](StateContext& c) {
    out[c.selected.ordinal] = fast_path(c).verdict;
    return true;
  });
  return out;
}

CheckOptions options_with(std::uint64_t shard, std::uint64_t shards, std::uint64_t max_states) {
  CheckOptions o;
  o.shard = shard;
  o.shards = shards;
  o.max_states = max_states;
  o.strategies.torn = 2;
  return o;
}

}  // namespace

TEST_CASE("an honest ext4 workload passes in every crash state, by the fast path", "[crash][check]") {
  for (const bool internal : {false, true}) {
    CAPTURE(internal);
    const Ext4Workload w = nvj::test::record_ext4_workload(Ext4WorkloadOptions{internal, 5, false});
    const RecordingIndex index(w.recording);
    const CrashChecker checker(index, options_with(0, 1, 0));
    REQUIRE(checker.plan().complete());
    std::uint64_t checked = 0, replayed = 0, with_facts = 0;
    checker.walk([&](StateContext& c) {
      const StateVerdict v = fast_path(c);
      CAPTURE(c.selected.ordinal, to_string(c.state.strategy), v.error);
      CHECK(v.verdict == Verdict::pass);
      ++checked;
      replayed += v.replayed;
      with_facts += c.oracle.expectations() > 0;
      return true;
    });
    CHECK(checked == checker.count().unique);
    CHECK(checked > 50);
    CHECK(replayed > 10);    // states where the journal held transactions not home yet
    CHECK(with_facts > 10);  // states after a fact
  }
}

TEST_CASE("a journal's replay from the memo writes what the replay writes, and gives its verdict", "[crash][check]") {
  // Every state checked twice: with the memo kept from state to state, and
  // afresh; the writes each makes into the state, in order, and the verdicts
  // are the same, and the memo was used.
  struct Tape final : fscore::BlockSink {
    fscore::BlockSink& to;
    std::vector<std::pair<std::uint64_t, std::vector<std::uint8_t>>> writes;
    explicit Tape(fscore::BlockSink& sink) : to(sink) {}
    void write(std::uint64_t offset, std::span<const std::uint8_t> bytes) override {
      to.write(offset, bytes);
      writes.emplace_back(offset, std::vector<std::uint8_t>(bytes.begin(), bytes.end()));
    }
  };
  for (const bool liar : {false, true}) {
    const Ext4Workload w = nvj::test::record_ext4_workload(Ext4WorkloadOptions{false, 4, liar});
    const RecordingIndex index(w.recording);
    const CrashChecker checker(index, options_with(0, 1, 0));
    std::uint64_t compared = 0;
    checker.walk([&](StateContext& c) {
      auto& fs = c.image.exported(c.data);
      auto& journal = c.image.exported(*c.journal);
      Tape fs_a(fs), journal_a(journal);
      const StateVerdict a = check_ext4_state(fs, fs_a, &journal, &journal_a, c.oracle, 1700001000, {}, &c.memo);
      c.image.set_state(c.state.kept, c.state.torn);
      Tape fs_b(fs), journal_b(journal);
      const StateVerdict b = check_ext4_state(fs, fs_b, &journal, &journal_b, c.oracle, 1700001000, {}, nullptr);
      CAPTURE(liar, c.selected.ordinal);
      CHECK(a.verdict == b.verdict);
      CHECK(a.replayed_blocks == b.replayed_blocks);
      CHECK(fs_a.writes == fs_b.writes);
      CHECK(journal_a.writes == journal_b.writes);
      ++compared;
      return true;
    });
    CHECK(compared > 100);
  }
  // The memo is used: most states share their point's journal.
  const Ext4Workload w = nvj::test::record_ext4_workload(Ext4WorkloadOptions{false, 4, false});
  const RecordingIndex index(w.recording);
  const CrashChecker checker(index, options_with(0, 1, 0));
  std::uint64_t hits = 0, misses = 0;
  checker.walk([&](StateContext& c) {
    fast_path(c);
    hits = c.memo.replay.hits();
    misses = c.memo.replay.misses();
    return true;
  });
  CHECK(hits > 3 * misses);
}

TEST_CASE("facts posted before the data is flushed fail where the data is dropped, and the cause is that data", "[crash][check]") {
  const Ext4Workload w = nvj::test::record_ext4_workload(Ext4WorkloadOptions{false, 5, true});
  const RecordingIndex index(w.recording);
  const CrashChecker checker(index, options_with(0, 1, 0));
  // Which file each data write belongs to, by where it lands.
  std::map<std::uint64_t, std::string> file_of;
  for (std::size_t k = 0; k < w.names.size(); ++k)
    for (const std::uint64_t at : w.data_writes[k]) file_of[at] = w.names[k];
  std::uint64_t failing = 0, minimized = 0;
  checker.walk([&](StateContext& c) {
    const StateVerdict v = fast_path(c);
    // It fails exactly when it drops a data write of a file its facts name.
    std::set<std::string> named;
    for (std::size_t m = 0; c.point.last_mark != kNoMark && m <= c.point.last_mark; ++m)
      named.insert(index.marks()[m].label.substr(10, 2));  // "fact file fK ..."
    bool drops_data = false;
    for (const std::size_t i : c.point.volatile_changes) {
      const IndexedChange& ch = index.changes()[i];
      const bool kept = std::binary_search(c.state.kept.begin(), c.state.kept.end(), i);
      const auto it = file_of.find(ch.offset);
      if (!kept && ch.device == 0 && it != file_of.end() && named.count(it->second) != 0) drops_data = true;
    }
    CAPTURE(c.selected.ordinal, to_string(c.state.strategy), v.error);
    CHECK(v.verdict == (drops_data ? Verdict::fail : Verdict::pass));
    if (v.verdict != Verdict::fail) return true;
    ++failing;
    if (minimized++ >= 25) return true;
    const CauseInputs in{index, c.image, c.data, c.journal, c.oracle, &c.memo, 1700001000, {}, {}};
    const CrashCause cause = minimize_cause(in, c.point, c.state);
    CHECK(cause.found);
    CHECK(cause.minimal);
    std::set<std::string> broken;
    for (const FactViolation& f : v.violations) broken.insert(f.path);
    if (cause.dropped.empty()) {  // a torn state whose tear alone breaks it: a data write of such a file, torn
      REQUIRE(c.state.torn);
      CHECK(cause.torn);
      CHECK(cause.torn_region == Region::data);
      CHECK(broken.count(file_of[index.changes()[c.state.torn->change].offset]) == 1);
      return true;
    }
    for (std::size_t j = 0; j < cause.dropped.size(); ++j) {
      const IndexedChange& ch = index.changes()[cause.dropped[j]];
      CHECK(ch.device == 0);
      REQUIRE(file_of.count(ch.offset) == 1);
      CHECK(broken.count(file_of[ch.offset]) == 1);  // the data of a file whose fact broke
      CHECK(cause.regions[j] == Region::data);
    }
    CHECK(cause.dropped.size() == 1);  // any one lost block breaks its file's fact
    return true;
  });
  CHECK(failing > 20);
  CHECK(minimized > 20);
}

TEST_CASE("a journal whose superblock never said needs_recovery is not replayed, as the kernel wipes it unread", "[crash][check]") {
  // No flush ever (nobarrier): the mount's superblock write stays volatile,
  // and in the states that drop it the kernel's ext4_load_journal wipes
  // the journal without replaying it (marked empty: s_start 0); the fast
  // path does the same, and the facts of what only the journal held break.
  const Ext4Workload w = nvj::test::record_ext4_workload(Ext4WorkloadOptions{false, 3, false, true});
  const RecordingIndex index(w.recording);
  const CrashChecker checker(index, options_with(0, 1, 0));
  std::uint64_t wiped = 0, replayed = 0, wiped_failing = 0;
  checker.walk([&](StateContext& c) {
    // The superblock's write is change 0 (the mount's first), never durable.
    REQUIRE(index.changes()[0].durable == kNever);
    const bool kept = std::binary_search(c.state.kept.begin(), c.state.kept.end(), std::size_t{0});
    const StateVerdict v = fast_path(c);
    CAPTURE(c.selected.ordinal, to_string(c.state.strategy), v.error);
    CHECK(v.journal_wiped == !kept);
    if (v.journal_wiped) {
      CHECK_FALSE(v.replayed);
      const auto& fs = c.image.exported(c.data);
      CHECK(fscore::ext4::locate_journal(fs, &c.image.exported(*c.journal)).super.start == 0);
      ++wiped;
      wiped_failing += v.verdict != Verdict::pass;
    } else {
      replayed += v.replayed;
    }
    return true;
  });
  CHECK(wiped > 20);
  CHECK(replayed > 20);
  CHECK(wiped_failing > 10);  // after a fact, what only the journal held is gone
}

TEST_CASE("shards split the states taken into disjoint parts that cover them, with the whole walk's verdicts", "[crash][check]") {
  const Ext4Workload w = nvj::test::record_ext4_workload(Ext4WorkloadOptions{false, 5, true});
  const RecordingIndex index(w.recording);
  for (const std::uint64_t budget : {std::uint64_t{0}, std::uint64_t{150}}) {
    CAPTURE(budget);
    const CrashChecker whole(index, options_with(0, 1, budget));
    const std::map<std::uint64_t, Verdict> all = verdicts(whole);
    CHECK(all.size() == whole.plan().selected);
    if (budget != 0) CHECK(whole.plan().selected == budget);
    for (const std::uint64_t n : {2u, 3u, 5u}) {
      CAPTURE(n);
      std::map<std::uint64_t, Verdict> joined;
      std::set<std::uint64_t> positions;
      for (std::uint64_t i = 0; i < n; ++i) {
        const CrashChecker shard(index, options_with(i, n, budget));
        for (const SelectedState& s : shard.mine()) {
          CHECK(s.position / CrashChecker::kShardBlock % n == i);  // blocks of 64 positions, block B to shard B mod N
          CHECK(positions.insert(s.position).second);
        }
        for (const auto& [ordinal, v] : verdicts(shard)) CHECK(joined.emplace(ordinal, v).second);
      }
      CHECK(joined == all);
      CHECK(positions.size() == whole.plan().selected);
    }
  }
  CHECK_THROWS_WITH(CrashChecker(index, options_with(3, 3, 0)), Catch::Contains("below the count"));
}

TEST_CASE("a walk goes in rounds: every state once, the first round over the whole recording, stopped when told", "[crash][check]") {
  const Ext4Workload w = nvj::test::record_ext4_workload(Ext4WorkloadOptions{true, 6, false});
  const RecordingIndex index(w.recording);
  const CrashChecker checker(index, options_with(0, 1, 0));
  const std::size_t n = checker.mine().size();
  REQUIRE(n > 200);
  std::vector<std::uint64_t> order;
  checker.walk([&](StateContext& c) {
    order.push_back(c.selected.position);
    return true;
  });
  std::vector<std::uint64_t> sorted = order;
  std::sort(sorted.begin(), sorted.end());
  std::vector<std::uint64_t> expected(n);
  for (std::size_t i = 0; i < n; ++i) expected[i] = i;
  CHECK(sorted == expected);
  // Round 0 is every 64th; round 1 the ones halfway between; in position
  // order within each round.
  const std::size_t first_round = (n + 63) / 64;
  for (std::size_t i = 0; i < first_round; ++i) CHECK(order[i] == 64 * i);
  CHECK(order[first_round] == 32);
  for (std::size_t i = 0; i + 1 < order.size(); ++i)
    if (CrashChecker::round_of(order[i]) == CrashChecker::round_of(order[i + 1])) CHECK(order[i] < order[i + 1]);
  CHECK(CrashChecker::round_of(0) == 0);
  CHECK(CrashChecker::round_of(32) == 1);
  CHECK(CrashChecker::round_of(48) == 2);
  CHECK(CrashChecker::round_of(7) == 6);
  // Stopped after its first round: that many visited, from the first
  // block of 64 to the last.
  std::vector<std::uint64_t> first;
  const std::uint64_t visited = checker.walk([&](StateContext& c) {
    first.push_back(c.selected.position);
    return first.size() < first_round;
  });
  CHECK(visited == first_round);
  CHECK(first.front() == 0);
  CHECK(first.back() + 64 >= n);
}

TEST_CASE("a budget takes a sample over every crash point and strategy, evenly", "[crash][check]") {
  // Groups of 0, 1, 5, 100 and 1000 states.
  const std::vector<std::uint64_t> groups{0, 1, 5, 100, 1000};
  SamplePlan all = plan_sample(groups, 0);
  CHECK(all.complete());
  CHECK(all.quota == groups);
  all = plan_sample(groups, 5000);
  CHECK(all.complete());
  const SamplePlan p = plan_sample(groups, 100);
  CHECK(p.selected == 100);
  CHECK(p.quota[0] == 0);
  CHECK(p.quota[1] == 1);  // every group that has a state gives one
  CHECK(p.quota[2] == 5);
  CHECK(p.quota[3] + p.quota[4] == 94);  // the rest shared by the big ones, as evenly as they allow
  CHECK(std::max(p.quota[3], p.quota[4]) - std::min(p.quota[3], p.quota[4]) <= 1);
  // Fewer states than groups: one from each of groups spread over them.
  const SamplePlan few = plan_sample(std::vector<std::uint64_t>(10, 3), 4);
  CHECK(few.selected == 4);
  std::uint64_t ones = 0;
  for (const std::uint64_t q : few.quota) {
    CHECK(q <= 1);
    ones += q;
  }
  CHECK(ones == 4);
  // The filter takes each group's quota, spread over the group.
  SampleFilter filter(p);
  std::vector<std::uint64_t> taken_at;
  for (std::uint64_t i = 0; i < 1000; ++i)
    if (filter.take(4)) taken_at.push_back(i);
  CHECK(taken_at.size() == p.quota[4]);
  CHECK(taken_at.front() < 1000 / p.quota[4]);
  CHECK(taken_at.back() >= 1000 - 1000 / p.quota[4]);
  // On a recording, a budget of one state per (point, strategy) that has
  // any: every point and strategy gets one.
  const Ext4Workload w = nvj::test::record_ext4_workload(Ext4WorkloadOptions{false, 5, true});
  const RecordingIndex index(w.recording);
  const CrashChecker whole(index, options_with(0, 1, 0));
  std::uint64_t groups_with_states = 0;
  for (const std::uint64_t g : whole.plan().unique_by_group) groups_with_states += g > 0;
  const CrashChecker sampled(index, options_with(0, 1, groups_with_states));
  REQUIRE_FALSE(sampled.plan().complete());
  std::set<std::uint32_t> points_all, points_sampled;
  for (const SelectedState& s : whole.mine()) points_all.insert(s.key.point);
  for (const SelectedState& s : sampled.mine()) points_sampled.insert(s.key.point);
  CHECK(points_sampled == points_all);
  for (std::size_t k = 0; k < kStrategies; ++k)
    if (whole.taken_by_strategy()[k] > 0) CHECK(sampled.taken_by_strategy()[k] > 0);
}

TEST_CASE("a signature says what failed without the numbers, and a checker's first finding only", "[crash][check]") {
  StateVerdict v;
  v.verdict = Verdict::unreadable;
  v.error = "e2fsck -fn -j JOURNAL exits 4: Inode 12 ref count is 2, should be 1.  Fix? no; Block bitmap differences:  -(9--12)";
  CHECK(signature_of(v) == "unreadable: e2fsck -fn -j JOURNAL exits #: Inode # ref count is #, should be #.  Fix? no");
  v.error = "e2fsck -fn exits 4: Entry 'foo' in /A (12) has deleted/unused inode 13.  Clear? no; Entry 'bar' in /A";
  CHECK(signature_of(v) == "unreadable: e2fsck -fn exits #: Entry '#' in /A (#) has deleted/unused inode #.  Clear? no");
  v.error = "e2fsck -fn exits 4: Block bitmap differences:  -(9--12) -15; Fix? no";
  CHECK(signature_of(v) == "unreadable: e2fsck -fn exits #: Block bitmap differences:");
  v.error = "filesystem: inode 0x1f in ext4 block 7: checksum does not match";
  CHECK(signature_of(v) == "unreadable: filesystem: inode # in ext4 block #: checksum does not match");
  v.verdict = Verdict::pass;
  CHECK(signature_of(v).empty());
}

}  // namespace state_walk_test
