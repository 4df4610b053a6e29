// SPDX-License-Identifier: BSD-3-Clause
#include "tools/nvj/crash/judge_session.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <numeric>
#include <optional>
#include <stdexcept>
#include <vector>

#include "crashlab/causes/crash_cause.h"
#include "crashlab/facts/fact_checker.h"
#include "crashlab/states/crash_image.h"
#include "crashlab/states/hash.h"
#include "tools/nvj/crash/ground_truth.h"
#include "tools/nvj/crash/progress.h"
#include "tools/nvj/crash/structure_fsck.h"
#include "tools/nvj/host/processes/interrupt.h"

namespace nvj::cli {

namespace {

// The tries a cause's minimization may spend: the fast path's are cheap,
// the kernel's (a mount and the checker) some 50 ms each.
constexpr std::uint64_t kFastMinimizeBudget = 400;
constexpr std::uint64_t kKernelMinimizeBudget = 60;

// One passing state in `sample`, chosen by its ordinal and the seed (the
// same on every shard).
bool in_passing_sample(std::uint64_t sample, std::uint64_t seed, std::uint64_t ordinal) {
  return crashlab::hash_of(seed, ordinal) % sample == 0;
}

class Session {
 public:
  Session(const crashlab::RecordingIndex& index, const crashlab::CrashChecker& checker, const SessionOptions& o)
      : index_(index), checker_(checker), o_(o), verify_(o.fast ? o.verify : "all"), entries_(checker.mine().size()) {
    for (const auto& e : index.exports()) sizes_.push_back(e.size);
    if (o.fast && o.structure) {
      try {
        structure_ = std::make_unique<StructureCheck>(index, o.scratch);
      } catch (const std::exception& e) {
        std::fprintf(stderr, "nvj crash check: no structure check (%s); the facts alone decide\n", e.what());
      }
    }
  }

  SessionResult run() {
    SessionResult result;
    result.final_state = verdict_json(final_state());
    Progress progress(checker_.mine().size());
    std::uint64_t failing = 0, visited = 0;
    std::optional<std::size_t> stopped_at;  // the state (index in mine) the check stopped before or at
    std::map<std::string, std::uint64_t> findings;
    checker_.walk([&](crashlab::StateContext& c) {
      const std::size_t i = index_of(c);
      if (const std::string why = stop_reason(progress.elapsed()); !why.empty()) {
        result.progress.stopped = why;
        stopped_at = i;
        return false;
      }
      const StateRecord& record = entries_[i].emplace(keep(i, check_state(c)));
      ++visited;
      const std::string& sig = record.signature;
      if (!sig.empty()) ++failing;
      progress.update(visited, failing);
      if (!sig.empty() && o_.max_findings > 0 && ++findings[sig] >= o_.max_findings) {
        result.progress.stopped = "findings";
        stopped_at = i;
        return false;
      }
      return true;
    });
    progress.finish();
    if (structure_) {  // the first pass's: the second checks some states again
      result.progress.structure_images = structure_->checked();
      result.progress.structure_shared = structure_->remembered();
    }
    result.progress.mine = checker_.mine().size();
    result.progress.checked = visited;
    result.progress.rounds = stopped_at ? crashlab::CrashChecker::round_of(*stopped_at) : crashlab::CrashChecker::kRounds;
    detail_first_of_each_signature();
    result.states.reserve(visited);
    for (auto& e : entries_)
      if (e) result.states.push_back(std::move(*e));
    result.verify = verify_;
    result.structure = structure_ != nullptr;
    result.seconds = progress.elapsed();
    return result;
  }

 private:
  std::size_t index_of(const crashlab::StateContext& c) const {
    return static_cast<std::size_t>(&c.selected - checker_.mine().data());
  }

  std::string stop_reason(double seconds) const {
    if (interrupted()) return "interrupted";
    if (o_.time_limit > 0 && seconds >= o_.time_limit) return "time limit";
    return "";
  }

  // The kernel's check, made at the first state that needs it. Where it
  // cannot run, the default (sample) goes on without it, saying so;
  // an explicit --verify, or a filesystem only the kernel reads, is an
  // error.
  KernelCheck* kernel() {
    if (kernel_ || verify_ == "none") return kernel_.get();
    try {
      kernel_ = std::make_unique<KernelCheck>(o_.scratch(), sizes_, o_.filesystem, o_.mount_options);
    } catch (const std::exception& e) {
      if (o_.verify_given || !o_.fast)
        throw std::runtime_error("--verify " + verify_ + (o_.verify_given ? "" : " (" + o_.filesystem + ")") + ": " +
                                 e.what());
      std::fprintf(stderr, "nvj crash check: no ground truth (%s); the fast path alone decides\n", e.what());
      verify_ = "none";
    }
    return kernel_.get();
  }

  // The journal's or log's export, where the filesystem has it on one.
  std::optional<std::uint8_t> log(std::optional<std::uint8_t> journal) const {
    return o_.external_log ? journal : std::nullopt;
  }
  std::optional<std::uint8_t> log(const crashlab::StateContext& c) const { return log(c.journal); }

  // The state `image` holds (its exports `data` and `journal`) by the
  // kernel, and by the fast path.
  crashlab::StateVerdict kernel_verdict(crashlab::CrashImage& image, std::uint8_t data, std::optional<std::uint8_t> journal,
                                        const crashlab::FactChecker& oracle) {
    return kernel()->check(image, data, log(journal), oracle);
  }
  crashlab::StateVerdict fast_verdict(crashlab::CrashImage& image, std::uint8_t data, std::optional<std::uint8_t> journal,
                                      const crashlab::FactChecker& oracle, crashlab::FastPathMemo* memo) const {
    auto& fs = image.exported(data);
    auto* log = journal ? &image.exported(*journal) : nullptr;
    return crashlab::check_ext4_state(fs, fs, log, log, oracle, checker_.options().now, checker_.options().recovery, memo);
  }
  crashlab::StateVerdict kernel_verdict(crashlab::StateContext& c) { return kernel_verdict(c.image, c.data, c.journal, c.oracle); }
  // The fast path's verdict, with what e2fsck finds in the structure the
  // state leaves once recovered where the state mounts and reads: damage
  // fails a passing state (unreadable, as the kernel's ground truth says
  // it), and is named beside a broken fact.
  crashlab::StateVerdict fast_verdict(crashlab::StateContext& c) {
    crashlab::StateVerdict v = fast_verdict(c.image, c.data, c.journal, c.oracle, &c.memo);
    if (!structure_ || (v.verdict != crashlab::Verdict::pass && v.verdict != crashlab::Verdict::fail)) return v;
    const std::string damage = structure_->damage(v, c.image, c.data, log(c));
    if (damage.empty()) return v;
    if (v.verdict == crashlab::Verdict::pass) v.verdict = crashlab::Verdict::unreadable;
    v.error += (v.error.empty() ? "" : "; ") + damage;
    return v;
  }

  // Every change kept on the durable contents at the end, judged by every
  // fact, as the states are (the fast path or the kernel).
  crashlab::StateVerdict final_state() {
    crashlab::CrashImage image(index_);
    image.advance(index_.end());
    std::vector<std::size_t> all(index_.changes().size());
    std::iota(all.begin(), all.end(), std::size_t{0});
    image.set_state(all);
    crashlab::FactChecker oracle;
    for (const auto& f : checker_.facts())
      if (f) oracle.add(*f);
    const std::uint8_t data = image.find("data").value_or(0);
    const std::optional<std::uint8_t> journal = image.find("journal");
    return o_.fast ? fast_verdict(image, data, journal, oracle, nullptr) : kernel_verdict(image, data, journal, oracle);
  }

  // The first pass's check of one state.
  Json check_state(crashlab::StateContext& c) {
    CheckedState checked{&c.selected, &c.state, &c.point, {}};
    if (!o_.fast) {  // the kernel's verdict is the state's
      kernel();
      checked.verdict = kernel_verdict(c);
      return state_json(index_, checked);
    }
    checked.verdict = fast_verdict(c);
    Json j = state_json(index_, checked);
    const bool passed = checked.verdict.verdict == crashlab::Verdict::pass;
    const bool wanted = verify_ == "all" ||
                        (verify_ == "sample" && passed &&
                         in_passing_sample(o_.sample, checker_.options().strategies.seed, c.selected.ordinal));
    if (wanted && kernel() != nullptr) add_ground_truth(c, checked.verdict, j);
    return j;
  }

  void add_ground_truth(crashlab::StateContext& c, const crashlab::StateVerdict& fast, Json& j) {
    c.image.set_state(c.state.kept, c.state.torn);  // the state as it was, before the fast path's replay
    const crashlab::StateVerdict truth = kernel_verdict(c);
    j["ground_truth"] = verdict_json(truth);
    j["agree"] = verdicts_agree(fast, truth);
  }

  // The record of state `i`'s entry, slimmed (slim_entry). A failing one
  // among the first per_signature of its signature by ordinal so far is
  // also kept whole, for the second pass.
  StateRecord keep(std::size_t i, Json entry) {
    if (const std::string sig = entry_signature(entry); !sig.empty() && o_.per_signature > 0) {
      auto& first = whole_[sig];
      if (first.size() < o_.per_signature || first.rbegin()->first > i) {
        first.emplace(i, entry);
        if (first.size() > o_.per_signature) first.erase(std::prev(first.end()));
      }
    }
    slim_entry(entry);
    return record_state(std::move(entry));
  }

  // The second pass: the first failing states of each signature in full.
  void detail_first_of_each_signature() {
    std::vector<std::size_t> which;
    for (const auto& [sig, first] : whole_)
      for (const auto& [i, entry] : first) which.push_back(i);
    std::sort(which.begin(), which.end());
    if (which.empty() || interrupted()) return;
    std::fprintf(stderr, "nvj crash check: the first %llu failing states of each of %zu signature%s in full: %zu states\n",
                 static_cast<unsigned long long>(o_.per_signature), whole_.size(), whole_.size() == 1 ? "" : "s",
                 which.size());
    checker_.walk_some(which, [&](crashlab::StateContext& c) {
      if (interrupted()) return false;
      const std::size_t i = index_of(c);
      Json& entry = whole_.at(entries_[i]->signature).at(i);
      detail(c, entry);
      entries_[i] = record_state(std::move(entry));
      return true;
    });
  }

  void detail(crashlab::StateContext& c, Json& entry) {
    add_state_changes(entry, index_, c.point, c.state);
    if (!o_.fast) {
      if (entry.at("verdict") != "fail") return;
      crashlab::CauseInputs in{index_, c.image, c.data, log(c), c.oracle, nullptr, checker_.options().now, {}, {}};
      in.judge = [&] { return kernel_verdict(c); };
      entry["cause"] = confirmed_cause(in, c, kKernelMinimizeBudget);
      return;
    }
    const crashlab::StateVerdict fast = fast_verdict(c);
    if (verify_ != "none" && !entry.contains("ground_truth") && kernel() != nullptr) add_ground_truth(c, fast, entry);
    if (fast.verdict != crashlab::Verdict::fail) return;
    const crashlab::CauseInputs in{index_, c.image, c.data, c.journal, c.oracle, &c.memo, checker_.options().now,
                                   checker_.options().recovery, {}};
    entry["cause"] = confirmed_cause(in, c, kFastMinimizeBudget);
  }

  // A failing state's minimized cause, and the kernel's verdict with only
  // the cause's writes dropped (the torn one torn) where the kernel checks.
  Json confirmed_cause(const crashlab::CauseInputs& in, crashlab::StateContext& c, std::uint64_t budget) {
    const crashlab::CrashCause cause = crashlab::minimize_cause(in, c.point, c.state, budget);
    Json j = cause_json(index_, cause);
    if (cause.found && verify_ != "none" && kernel() != nullptr) {
      c.image.set_state(crashlab::kept_without(c.point, c.state, cause.dropped), c.state.torn);
      j["ground_truth"] = crashlab::to_string(kernel_verdict(c).verdict);
    }
    return j;
  }

  const crashlab::RecordingIndex& index_;
  const crashlab::CrashChecker& checker_;
  const SessionOptions& o_;
  std::string verify_;
  std::vector<std::uint64_t> sizes_;
  std::unique_ptr<KernelCheck> kernel_;
  std::unique_ptr<StructureCheck> structure_;
  std::vector<std::optional<StateRecord>> entries_;  // by index in mine()
  // Per signature, the first per_signature failing entries by index in
  // mine() seen so far, whole (their records are slimmed).
  std::map<std::string, std::map<std::size_t, Json>> whole_;
};

}  // namespace

SessionResult run_judge_session(const crashlab::RecordingIndex& index, const crashlab::CrashChecker& checker,
                                const SessionOptions& options) {
  return Session(index, checker, options).run();
}

}  // namespace nvj::cli
