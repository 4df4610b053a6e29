// SPDX-License-Identifier: BSD-3-Clause
// MetadataKeys (crashlab/states/metadata_key.h) on ext4 workloads recorded without
// a kernel (tests/support/ext4_workload.h), against a truth of its own:
//   - two states with one key hold the same metadata once the fast path has
//     recovered them: every block the state's own filesystem owns as
//     anything but a file's data or the journal's log (read per state with
//     BlockOwners, not from the key's ranges), the journal's superblock, and
//     an external journal's head; over every state, torn ones too, with the
//     journal on its own export and inside, with and without barriers;
//   - states that differ only in a file's data share a key, and states whose
//     replay differs (a transaction's commit dropped) do not.
#include <catch2/catch.hpp>

#include <span>
#include <utility>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "crashlab/judge/state_walk.h"
#include "crashlab/states/crash_image.h"
#include "crashlab/facts/fact_checker.h"
#include "crashlab/states/hash.h"
#include "crashlab/states/metadata_key.h"
#include "crashlab/judge/fast_path.h"
#include "fscore/ext4/block_owners.h"
#include "fscore/ext4/journal_replay.h"
#include "tests/support/ext4_workload.h"

namespace metadata_key_test {

using namespace crashlab;
using nvj::test::Ext4Workload;
using nvj::test::Ext4WorkloadOptions;

namespace {

constexpr std::uint32_t kNow = 1700001000;

StateVerdict recover(CrashImage& image, std::uint8_t data, std::optional<std::uint8_t> journal, const FactChecker& oracle) {
  auto& fs = image.exported(data);
  auto* log = journal ? &image.exported(*journal) : nullptr;
  return check_ext4_state(fs, fs, log, log, oracle, kNow, {}, nullptr);
}

// The recovered metadata as the state's own filesystem tells it, hashed
// (two states the key merges must hash alike; a collision could only hide
// a difference).
std::pair<std::uint64_t, std::uint64_t> metadata_of(CrashImage& image, std::uint8_t data, std::optional<std::uint8_t> journal) {
  const auto& fs = image.exported(data);
  const fscore::ext4::BlockOwners owners = fscore::ext4::BlockOwners::read(fs);
  const std::uint64_t bs = owners.info().block_size;
  std::pair<std::uint64_t, std::uint64_t> h{0, 0};
  const auto add = [&](std::uint64_t where, std::span<const std::uint8_t> bytes) {
    h.first = hash_of(h.first, where, hash_bytes(bytes.data(), bytes.size(), 1));
    h.second = hash_of(h.second, where, hash_bytes(bytes.data(), bytes.size(), 2));
  };
  std::vector<std::uint8_t> block(bs);
  for (const fscore::ext4::BlockOwner& o : owners.owners()) {
    if (o.kind == fscore::ext4::BlockKind::file) continue;
    for (std::uint64_t b = o.start; b < o.start + o.count; ++b) {
      if (o.kind == fscore::ext4::BlockKind::journal && o.file_block + (b - o.start) != 0) continue;  // the log
      fs.read(b * bs, block);
      add(b, block);
    }
  }
  if (journal) {
    const auto& j = image.exported(*journal);
    const fscore::ext4::LocatedJournal where = fscore::ext4::locate_journal(fs, &j);
    std::vector<std::uint8_t> head(where.superblock_offset + 1024);
    j.read(0, head);
    add(~std::uint64_t{0}, head);
  }
  return h;
}

}  // namespace

TEST_CASE("states with one metadata key hold the same recovered metadata, as their own filesystem tells it", "[crash][structure]") {
  for (const bool internal : {false, true})
    for (const bool nobarrier : {false, true}) {
      CAPTURE(internal, nobarrier);
      Ext4WorkloadOptions wo;
      wo.internal_journal = internal;
      wo.files = 3;
      wo.nobarrier = nobarrier;
      const Ext4Workload w = nvj::test::record_ext4_workload(wo);
      const RecordingIndex index(w.recording);
      const MetadataKeys keys(index);
      REQUIRE_FALSE(keys.whole());
      CheckOptions o;
      o.strategies.torn = 1;
      const CrashChecker checker(index, o);
      std::map<std::vector<std::uint64_t>, std::pair<std::uint64_t, std::uint64_t>> seen;
      std::set<std::pair<std::uint64_t, std::uint64_t>> truths;
      std::uint64_t states = 0, recovered = 0;
      checker.walk([&](StateContext& c) {
        const StateVerdict v = recover(c.image, c.data, c.journal, c.oracle);
        CAPTURE(c.selected.ordinal, to_string(v.verdict), v.error);
        if (v.verdict != Verdict::pass && v.verdict != Verdict::fail) return true;
        ++states;
        recovered += v.replay.has_value();
        const auto truth = metadata_of(c.image, c.data, c.journal);
        truths.insert(truth);
        const auto [at, added] = seen.emplace(keys.key(c.image, v), truth);
        CHECK((added || at->second == truth));
        return true;
      });
      CHECK(states > 100);
      CHECK(recovered > 10);
      // States share keys, and the keys tell apart what differs.
      CHECK(seen.size() < states);
      CHECK(seen.size() >= truths.size());
      UNSCOPED_INFO(states << " states, " << seen.size() << " keys, " << truths.size() << " distinct metadata");
    }
}

TEST_CASE("a state without one of a file's data writes shares its key; one without a commit does not", "[crash][structure]") {
  Ext4WorkloadOptions wo;
  wo.files = 3;
  wo.nobarrier = true;  // nothing on the data disk is ever durable
  const Ext4Workload w = nvj::test::record_ext4_workload(wo);
  const RecordingIndex index(w.recording);
  const MetadataKeys keys(index);
  CrashImage image(index);
  image.advance(index.end());
  const std::uint8_t data = image.find("data").value();
  const std::optional<std::uint8_t> journal = image.find("journal");
  REQUIRE(journal);
  std::vector<std::size_t> volatile_changes;
  std::optional<std::size_t> data_write, last_journal_write;
  for (std::size_t i = 0; i < index.changes().size(); ++i) {
    const IndexedChange& c = index.changes()[i];
    if (c.device == *journal) last_journal_write = i;
    if (c.durable != kNever) continue;
    volatile_changes.push_back(i);
    if (c.device == data && c.offset == w.data_writes.at(1).at(0)) data_write = i;
  }
  REQUIRE(data_write);
  REQUIRE(last_journal_write);
  const FactChecker oracle;
  const auto key_of = [&](std::vector<std::size_t> kept, std::optional<std::size_t> without) {
    if (without) std::erase(kept, *without);
    image.set_state(kept);
    const StateVerdict v = recover(image, data, journal, oracle);
    REQUIRE(v.verdict == Verdict::pass);
    return keys.key(image, v);
  };
  const std::vector<std::uint64_t> all = key_of(volatile_changes, std::nullopt);
  CHECK(key_of(volatile_changes, data_write) == all);
  // The journal's writes are durable on acknowledgement (NVRAM): the last
  // commit goes by taking the state at the point before it.
  CrashImage earlier(index);
  earlier.advance(index.changes()[*last_journal_write].sequence - 1);
  std::vector<std::size_t> kept;
  for (const std::size_t i : volatile_changes)
    if (index.changes()[i].sequence < index.changes()[*last_journal_write].sequence) kept.push_back(i);
  earlier.set_state(kept);
  const StateVerdict before_commit = recover(earlier, data, journal, oracle);
  REQUIRE(before_commit.verdict == Verdict::pass);
  CHECK(keys.key(earlier, before_commit) != all);
}

}  // namespace metadata_key_test
