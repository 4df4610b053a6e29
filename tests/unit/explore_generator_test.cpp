// SPDX-License-Identifier: BSD-3-Clause
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "crashlab/explore/generator.h"
#include "crashlab/explore/sample.h"
#include "tests/support/temp_dir.h"
#include "tools/workloads/explore_steps.h"

namespace explore_generator_test {

using crashlab::explore::Generator;
using crashlab::explore::OpKind;
using crashlab::explore::Persist;
using crashlab::explore::Step;
using crashlab::explore::Workload;

namespace fs = std::filesystem;

namespace {

// Nothing here crashes: a persistence call is only checked to name
// something there (made, sync(2) and fsync(2) wait on every writer of the
// machine). The kernel tests make them (explore, explore_vm).
constexpr auto kOpenOnly = nvj::workloads::PersistCalls::open_only;

std::size_t core_steps(const Workload& w) {
  std::size_t n = 0;
  for (const Step& s : w.steps) n += !s.setup;
  return n;
}

}  // namespace

TEST_CASE("seq-1, seq-2 and seq-3 hold as many workloads as the choices make", "[explore]") {
  const Generator one(1), two(2), three(3);
  const std::uint64_t choices = one.choices().size();
  std::uint64_t last = 0;
  for (const Step& s : one.choices()) last += s.persist != Persist::none;
  CHECK(one.count() == last);
  CHECK(one.count() >= 300);  // ACE's seq-1: 328
  CHECK(two.count() == last * choices);
  CHECK(three.count() == last * choices * choices);
  CHECK_THROWS_AS(Generator(0), std::invalid_argument);
  CHECK_THROWS_AS(Generator(4), std::invalid_argument);
  CHECK_THROWS_AS(one.at(one.count()), std::out_of_range);
}

TEST_CASE("every seq-1 workload has a name of its own, its bound's core steps and a last persistence call",
          "[explore]") {
  const Generator g(1);
  std::set<std::string> names;
  std::set<OpKind> kinds;
  for (std::uint64_t i = 0; i < g.count(); ++i) {
    const Workload w = g.at(i);
    CHECK(w.ordinal == i);
    CHECK(names.insert(w.name).second);
    REQUIRE(core_steps(w) == 1);
    CHECK(w.steps.back().persist != Persist::none);
    CHECK_FALSE(w.steps.back().setup);
    kinds.insert(w.steps.back().op.kind);
    // The same ordinal, the same workload.
    CHECK(g.at(i).name == w.name);
  }
  CHECK(kinds.size() == crashlab::explore::all_op_kinds().size());
}

TEST_CASE("the operations drawn from are those --ops names", "[explore]") {
  const Generator g(2, {OpKind::rename_over, OpKind::write_append});
  for (std::uint64_t i = 0; i < g.count(); i += 7)
    for (const Step& s : g.at(i).steps)
      if (!s.setup) CHECK((s.op.kind == OpKind::rename_over || s.op.kind == OpKind::write_append));
  CHECK_THROWS_AS(crashlab::explore::op_kind_named("frobnicate"), std::invalid_argument);
}

TEST_CASE("ACE's seq-3 subsets keep the workloads of their operations, names, persistence calls and rules",
          "[explore]") {
  using crashlab::explore::generator_named;
  const auto names_of = [](const Step& s) {
    std::vector<std::string> out{s.op.path};
    if (!s.op.second.empty()) out.push_back(s.op.second);
    if (!s.persist_path.empty()) out.push_back(s.persist_path);
    return out;
  };
  const auto buffered = [](OpKind k) {
    return k == OpKind::write_append || k == OpKind::write_overwrite || k == OpKind::write_unaligned;
  };
  for (const std::string bound : {"seq-3-data", "seq-3-metadata", "seq-3-nested"}) {
    INFO(bound);
    const crashlab::explore::Restriction r = crashlab::explore::ace_subset(bound);
    const Generator g = generator_named(bound);
    REQUIRE(g.count() > 1000);
    CHECK(g.count() < Generator(3, r.kinds).count());  // narrower than seq-3 over its operations
    std::set<std::string> seen;
    const std::uint64_t stride = std::max<std::uint64_t>(1, g.count() / 3000);
    for (std::uint64_t i = 0; i < g.count(); i += stride) {
      const Workload w = g.at(i);
      INFO(i << ": " << w.name);
      CHECK(w.ordinal == i);
      CHECK(seen.insert(w.name).second);
      std::vector<Step> core;
      for (const Step& s : w.steps)
        if (!s.setup) core.push_back(s);
      REQUIRE(core.size() == 3);
      CHECK(core.back().persist != Persist::none);
      std::set<std::string> named;
      for (std::size_t k = 0; k < core.size(); ++k) {
        const Step& s = core[k];
        CHECK(std::find(r.kinds.begin(), r.kinds.end(), s.op.kind) != r.kinds.end());
        for (const std::string& n : names_of(s))
          if (s.op.kind != OpKind::symlink) CHECK(std::find(r.names.begin(), r.names.end(), n) != r.names.end());
        if (!r.sync) CHECK(s.persist != Persist::sync);
        if (!r.fdatasync) CHECK(s.persist != Persist::fdatasync);
        if (bound == "seq-3-nested" && k > 0)
          CHECK((named.count(s.op.path) > 0 || named.count(s.op.second) > 0));
        named.insert(s.op.path);
        named.insert(s.op.second);
      }
      CHECK_FALSE(std::all_of(core.begin(), core.end(), [&](const Step& s) { return buffered(s.op.kind); }));
      if (bound == "seq-3-data") CHECK(core.front().op.kind == OpKind::write_append);
    }
    CHECK_THROWS_AS(g.at(g.count()), std::out_of_range);
  }
  // --ops narrows a subset further; one that leaves it nothing is refused.
  const Generator links = generator_named("seq-3-nested", {OpKind::link});
  for (std::uint64_t i = 0; i < links.count(); i += 11)
    for (const Step& s : links.at(i).steps)
      if (!s.setup) CHECK(s.op.kind == OpKind::link);
  CHECK_THROWS_AS(generator_named("seq-3-data", {OpKind::link}), std::invalid_argument);
  CHECK_THROWS_AS(crashlab::explore::ace_subset("seq-3-other"), std::invalid_argument);
  CHECK_THROWS_AS(generator_named("seq-3-other"), std::invalid_argument);
}

TEST_CASE("the setup satisfies every step's dependencies: each workload runs on a real filesystem", "[explore]") {
  // Under the working directory (the build tree: a real filesystem that
  // takes O_DIRECT, which tmpfs does not).
  const nvj::test::TempDir dir(fs::current_path());
  const auto run_all = [&](const Workload& w) {
    dir.clear();
    INFO(w.ordinal << ": " << crashlab::explore::describe_steps(w.steps));
    for (const Step& s : w.steps) REQUIRE_NOTHROW(nvj::workloads::run_step(dir.path, s, kOpenOnly));
  };
  const Generator one(1);
  for (std::uint64_t i = 0; i < one.count(); ++i) run_all(one.at(i));
  // seq-2 and seq-3: a spread of them (every 997th, every 99991st), pairs that
  // undo each other's dependencies among them (unlink, then write).
  const Generator two(2), three(3);
  for (std::uint64_t i = 0; i < two.count(); i += 997) run_all(two.at(i));
  for (std::uint64_t i = 0; i < three.count(); i += 99991) run_all(three.at(i));
  for (const char* bound : {"seq-3-data", "seq-3-metadata", "seq-3-nested"}) {
    const Generator g = crashlab::explore::generator_named(bound);
    for (std::uint64_t i = 0; i < g.count(); i += std::max<std::uint64_t>(1, g.count() / 50)) run_all(g.at(i));
  }
}

TEST_CASE("a setup that must undo what a core step did", "[explore]") {
  // rmdir(A/C) then creat(A/C/foo): A/C is made again between them.
  const Generator g(2, {OpKind::rmdir, OpKind::creat});
  bool seen = false;
  for (std::uint64_t i = 0; i < g.count(); ++i) {
    const Workload w = g.at(i);
    if (w.name.rfind("rmdir(A/C) sync; creat(A/C/foo)", 0) != 0) continue;
    seen = true;
    std::size_t rmdir_at = 0, mkdir_at = 0, creat_at = 0;
    for (std::size_t k = 0; k < w.steps.size(); ++k) {
      const Step& s = w.steps[k];
      if (!s.setup && s.op.kind == OpKind::rmdir) rmdir_at = k;
      if (s.setup && s.op.kind == OpKind::mkdir && s.op.path == "A/C" && k > rmdir_at) mkdir_at = k;
      if (!s.setup && s.op.kind == OpKind::creat) creat_at = k;
    }
    CHECK(rmdir_at < mkdir_at);
    CHECK(mkdir_at < creat_at);
  }
  CHECK(seen);
}

TEST_CASE("names lead to files: a rename of one link over another leaves both, a change under one is under both",
          "[explore]") {
  // rename(2) of one hard link over another of the same file does nothing,
  // and a truncation under one name cuts the file under the other. A link,
  // then each of those, then every seq-1 choice: each runs on a real
  // filesystem as its setup says.
  const nvj::test::TempDir dir(fs::current_path());
  const Step link{{OpKind::link, "A/C/foo", "B/foo"}, Persist::none, "", false, {}};
  const Generator one(1);
  std::size_t ran = 0;
  for (const Step& second : {Step{{OpKind::rename_over, "A/C/foo", "B/foo"}, Persist::none, "", false, {}},
                            Step{{OpKind::truncate_shrink, "B/foo", ""}, Persist::none, "", false, {}}})
    for (const Step& third : one.choices()) {
      const std::vector<Step> steps = crashlab::explore::with_setup({link, second, third});
      dir.clear();
      INFO(crashlab::explore::describe_steps(steps));
      for (const Step& s : steps) REQUIRE_NOTHROW(nvj::workloads::run_step(dir.path, s, kOpenOnly));
      ++ran;
    }
  CHECK(ran > 2 * 300);
  // The seq-3 workload that once failed its setup: A/C/foo is still there
  // for the third step, made once.
  const std::vector<Step> steps = crashlab::explore::with_setup({
      Step{{OpKind::link, "A/C/foo", "B/foo"}, Persist::fsync, "B/foo", false, {}},
      Step{{OpKind::rename_over, "A/C/foo", "B/foo"}, Persist::fsync, "A/C", false, {}},
      Step{{OpKind::falloc_keep_size, "A/C/foo", ""}, Persist::fdatasync, "A/C/foo", false, {}},
  });
  std::size_t creats = 0;
  for (const Step& s : steps) creats += s.op.kind == OpKind::creat && s.op.path == "A/C/foo";
  CHECK(creats == 1);
}

}  // namespace explore_generator_test

namespace explore_generator_test {

TEST_CASE("a sample of a bound: distinct ordinals in range, ascending, the same for a seed, uniform", "[explore]") {
  using crashlab::explore::sample_ordinals;
  const std::vector<std::uint64_t> a = sample_ordinals(84478176, 1000, 7);
  CHECK(a.size() == 1000);
  CHECK(std::is_sorted(a.begin(), a.end()));
  CHECK(std::adjacent_find(a.begin(), a.end()) == a.end());
  CHECK(a.back() < 84478176);
  CHECK(sample_ordinals(84478176, 1000, 7) == a);
  CHECK(sample_ordinals(84478176, 1000, 8) != a);
  // The whole bound, and one of one.
  const std::vector<std::uint64_t> all = sample_ordinals(50, 50, 1);
  CHECK(all.size() == 50);
  CHECK(all.front() == 0);
  CHECK(all.back() == 49);
  CHECK(sample_ordinals(1, 1, 3) == std::vector<std::uint64_t>{0});
  // Uniform: 3 of 10 drawn 20000 times, each ordinal about 6000 times
  // (binomial, sd about 65: 6 sd is 390).
  std::vector<int> hits(10, 0);
  for (std::uint64_t seed = 0; seed < 20000; ++seed)
    for (const std::uint64_t o : sample_ordinals(10, 3, seed)) ++hits[o];
  for (const int h : hits) {
    CAPTURE(hits);
    CHECK(std::abs(h - 6000) < 390);
  }
  CHECK_THROWS_WITH(sample_ordinals(10, 0, 1), Catch::Contains("expected 1 to 10"));
  CHECK_THROWS_WITH(sample_ordinals(10, 11, 1), Catch::Contains("a sample of 11 of 10"));
}

}  // namespace explore_generator_test
