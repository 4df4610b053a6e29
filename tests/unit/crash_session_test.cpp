// SPDX-License-Identifier: BSD-3-Clause
// nvj crash check's session (tools/nvj/crash/judge_session.h) without the
// kernel, on an ext4 workload that lies about its facts
// (tests/support/ext4_workload.h): a check stops once a signature has
// --max-findings failing states, or at its time limit, having checked a
// sample spread over the recording and saying why it stopped; the first
// --per-signature failing states of each signature are described in full
// (their changes, their minimized cause), the others keep what broke, in
// a few words. With the structure check on, the real e2fsck judges every
// state of an honest workload clean, each recovered metadata image once.
#include <catch2/catch.hpp>

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>

#include "crashlab/judge/state_walk.h"
#include "tests/support/ext4_workload.h"
#include "tests/support/temp_dir.h"
#include "tools/nvj/crash/judge_session.h"
#include "tools/nvj/crash/results_json.h"

namespace crash_session_test {

namespace {

nvj::cli::SessionResult session(const crashlab::CrashChecker& checker, const crashlab::RecordingIndex& index,
                                std::uint64_t max_findings, double time_limit, std::uint64_t per_signature = 2) {
  nvj::cli::SessionOptions s;
  s.fast = true;
  s.verify = "none";
  s.verify_given = true;
  s.per_signature = per_signature;
  s.max_findings = max_findings;
  s.time_limit = time_limit;
  s.filesystem = "ext4";
  s.structure = false;  // e2fsck's part is tested below
  return nvj::cli::run_judge_session(index, checker, s);
}

}  // namespace

TEST_CASE("a check stops after so many findings of one signature, or at its time limit, and says so", "[crash][session]") {
  const nvj::test::Ext4Workload w = nvj::test::record_ext4_workload({false, 4, true});
  const crashlab::RecordingIndex index(w.recording);
  crashlab::CheckOptions o;
  const crashlab::CrashChecker checker(index, o);
  const std::uint64_t mine = checker.mine().size();

  const nvj::cli::SessionResult all = session(checker, index, 0, 0);
  CHECK(all.progress.stopped.empty());
  CHECK(all.progress.checked == mine);
  CHECK(all.progress.rounds == crashlab::CrashChecker::kRounds);

  const nvj::cli::SessionResult five = session(checker, index, 5, 0);
  CHECK(five.progress.stopped == "findings");
  CHECK(five.progress.checked < mine);
  CHECK(five.progress.rounds < crashlab::CrashChecker::kRounds);
  std::map<std::string, std::uint64_t> by_signature;
  for (const nvj::cli::StateRecord& s : five.states)
    if (const std::string sig = nvj::cli::entry_signature(s.entry()); !sig.empty()) ++by_signature[sig];
  std::uint64_t most = 0;
  for (const auto& [sig, n] : by_signature) most = std::max(most, n);
  CHECK(most == 5);  // it stopped at the fifth

  const nvj::cli::SessionResult none = session(checker, index, 0, 1e-9);
  CHECK(none.progress.stopped == "time limit");
  CHECK(none.progress.checked == 0);
  CHECK(none.progress.rounds == 0);
  CHECK(none.states.empty());
}

TEST_CASE("the first failing states of each signature are described in full, the others in a few words", "[crash][session]") {
  const nvj::test::Ext4Workload w = nvj::test::record_ext4_workload({false, 4, true});
  const crashlab::RecordingIndex index(w.recording);
  crashlab::CheckOptions o;
  const crashlab::CrashChecker checker(index, o);
  const nvj::cli::SessionResult r = session(checker, index, 0, 0, 2);
  std::map<std::string, std::uint64_t> seen;
  std::uint64_t failing = 0;
  std::uint64_t last = 0;
  for (const nvj::cli::StateRecord& record : r.states) {  // in ordinal order
    CHECK((failing == 0 || record.ordinal > last));
    last = record.ordinal;
    const nvj::Json s = record.entry();
    CHECK(s.at("ordinal") == record.ordinal);
    const std::string sig = nvj::cli::entry_signature(s);
    CHECK(sig == record.signature);
    if (sig.empty()) {
      CHECK(s.at("verdict") == "pass");
      CHECK_FALSE(s.contains("signature"));
      continue;
    }
    CHECK(s.at("signature") == sig);
    ++failing;
    const bool first_two = seen[sig]++ < 2;
    CHECK(record.detailed == first_two);
    CHECK(s.contains("kept_changes") == first_two);
    CHECK(s.contains("cause") == first_two);
    for (const nvj::Json& v : s.at("violations")) {
      CHECK(v.contains("expected") == first_two);
      CHECK((v.contains("what") && v.contains("how")));
    }
  }
  CHECK(failing > 20);
}

TEST_CASE("with the structure check, e2fsck passes every state of an honest workload, each recovered metadata image once", "[crash][session][structure]") {
  // The real e2fsck on the states the fast path recovered: ImageBuilder's
  // filesystem, its journal replayed, clean in every state.
  for (const bool internal : {false, true}) {
    CAPTURE(internal);
    const nvj::test::Ext4Workload w = nvj::test::record_ext4_workload({internal, 3, false});
    const crashlab::RecordingIndex index(w.recording);
    const crashlab::CrashChecker checker(index, crashlab::CheckOptions{});
    nvj::test::TempDir scratch;
    nvj::cli::SessionOptions s;
    s.fast = true;
    s.verify = "none";
    s.verify_given = true;
    s.filesystem = "ext4";
    s.external_log = !internal;
    s.scratch = [&scratch] { return scratch.path; };
    const nvj::cli::SessionResult r = nvj::cli::run_judge_session(index, checker, s);
    REQUIRE(r.structure);
    CHECK(r.progress.checked == checker.mine().size());
    for (const nvj::cli::StateRecord& state : r.states) {
      CAPTURE(state.line);
      CHECK(state.verdict == crashlab::Verdict::pass);
    }
    CHECK(r.progress.structure_images > 1);
    CHECK(r.progress.structure_images + r.progress.structure_shared == r.progress.checked);
    CHECK(r.progress.structure_images * 4 < r.progress.checked);
    CHECK_FALSE(std::filesystem::exists(scratch.path / "structure"));  // removed at the end
  }
}

}  // namespace crash_session_test
