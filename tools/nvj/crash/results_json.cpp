// SPDX-License-Identifier: BSD-3-Clause
#include "tools/nvj/crash/results_json.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>

#include "crashlab/causes/signature.h"

namespace nvj::cli {

namespace {

using crashlab::CrashPoint;
using crashlab::IndexedChange;
using crashlab::RecordingIndex;

Json reasons(std::uint32_t r) {
  Json out = Json::array();
  if (r & crashlab::kAtMark) out.push_back("mark");
  if (r & crashlab::kAtPersistence) out.push_back("persistence");
  if (r & crashlab::kAtEvery) out.push_back("every");
  if (r & crashlab::kAtEnd) out.push_back("end");
  return out;
}

Json change_json(const RecordingIndex& index, const IndexedChange& c) {
  return Json{{"id", c.id},
              {"frame", c.sequence},
              {"export", index.exports().at(c.device).name},
              {"kind", fscore::record::to_string(c.kind)},
              {"offset", c.offset},
              {"length", c.length},
              {"acknowledged", c.acked != crashlab::kNever}};
}

Json violations_json(const std::vector<crashlab::FactViolation>& violations) {
  Json out = Json::array();
  for (const auto& f : violations)
    out.push_back(Json{{"path", f.path}, {"expected", f.expected}, {"found", f.found}, {"what", f.what}, {"how", f.how}});
  return out;
}

// A verdict back from its JSON, as much as a signature needs.
crashlab::StateVerdict verdict_from(const Json& j) {
  crashlab::StateVerdict v;
  v.verdict = crashlab::verdict_named(j.at("verdict").get<std::string>()).value_or(crashlab::Verdict::unreadable);
  if (j.contains("error")) v.error = j["error"].get<std::string>();
  if (j.contains("violations"))
    for (const Json& f : j["violations"])
      v.violations.push_back({f.at("path").get<std::string>(), "", "", f.at("what").get<std::string>(),
                              f.at("how").get<std::string>()});
  return v;
}

constexpr const char* kDetails[] = {"kept_changes", "dropped_changes", "cause"};

bool detailed(const Json& entry) { return entry.contains("kept_changes"); }

// The signatures of the failing states, in order of their first state,
// each with how many states and how many detailed.
Json signatures_of(const std::vector<StateRecord>& states) {
  std::map<std::string, std::size_t> at;  // signature -> index in the list
  std::vector<std::uint64_t> count, details;
  Json list = Json::array();
  for (const StateRecord& s : states) {
    if (!s.failing()) continue;
    auto [it, added] = at.try_emplace(s.signature, list.size());
    if (added) {
      list.push_back(Json{{"signature", s.signature}, {"states", 0}, {"first", s.ordinal}, {"detailed", 0}});
      count.push_back(0);
      details.push_back(0);
    }
    ++count[it->second];
    details[it->second] += s.detailed;
  }
  for (std::size_t i = 0; i < list.size(); ++i) {
    list[i]["states"] = count[i];
    list[i]["detailed"] = details[i];
  }
  return list;
}

// The strategies' "checked" and the points checked, of `states`.
void count_checked(const std::vector<StateRecord>& states, Json& strategies, Json& points) {
  std::array<std::uint64_t, crashlab::kStrategies> checked_by{};
  std::set<std::uint64_t> points_checked;
  for (const StateRecord& s : states) {
    ++checked_by[static_cast<std::size_t>(s.strategy)];
    points_checked.insert(s.point);
  }
  for (std::size_t k = 0; k < crashlab::kStrategies; ++k)
    strategies[crashlab::to_string(static_cast<crashlab::Strategy>(k))]["checked"] = checked_by[k];
  points["checked"] = points_checked.size();
}

// Per strategy: unique, taken, checked; and the points.
Json coverage_json(const crashlab::CrashChecker& checker, const std::vector<StateRecord>& states,
                   const CheckLimits& limits, const CheckProgress& progress) {
  const crashlab::SamplePlan& plan = checker.plan();
  std::uint64_t with_states = 0;
  for (std::size_t p = 0; p < checker.points().size(); ++p) {
    std::uint64_t n = 0;
    for (std::size_t k = 0; k < crashlab::kStrategies; ++k) n += plan.unique_by_group[p * crashlab::kStrategies + k];
    with_states += n > 0;
  }
  Json strategies = Json::object();
  for (std::size_t k = 0; k < crashlab::kStrategies; ++k)
    strategies[crashlab::to_string(static_cast<crashlab::Strategy>(k))] =
        Json{{"unique", checker.count().by_strategy[k].unique}, {"taken", checker.taken_by_strategy()[k]}, {"checked", 0}};
  Json points{{"total", checker.points().size()}, {"with_states", with_states}, {"checked", 0}};
  count_checked(states, strategies, points);
  return Json{{"unique", plan.unique},
              {"taken", plan.selected},
              {"checked", states.size()},
              {"not_checked", plan.unique - states.size()},
              {"sampled", !plan.complete()},
              {"stopped", progress.stopped.empty() ? Json(nullptr) : Json(progress.stopped)},
              {"time_limit", limits.time_limit > 0 ? Json(limits.time_limit) : Json(nullptr)},
              {"rounds", progress.rounds},
              {"points", points},
              {"strategies", strategies}};
}

}  // namespace

Json verdicts_json(const VerdictCount& c) {
  return Json{{"checked", c.checked},       {"pass", c.pass},
              {"fail", c.fail},             {"unreadable", c.unreadable},
              {"needs_fsck", c.needs_fsck},
              {"failing", c.failing},       {"ground_truth", c.verified},
              {"ground_truth_failing", c.verified_failing}, {"disagree", c.disagree}};
}

Json verdict_json(const crashlab::StateVerdict& v) {
  Json j{{"verdict", crashlab::to_string(v.verdict)}};
  if (!v.violations.empty()) j["violations"] = violations_json(v.violations);
  if (!v.error.empty()) j["error"] = v.error;
  return j;
}

Json cause_json(const RecordingIndex& index, const crashlab::CrashCause& cause) {
  Json dropped = Json::array();
  for (std::size_t i = 0; i < cause.dropped.size(); ++i) {
    Json c = change_json(index, index.changes()[cause.dropped[i]]);
    c["region"] = crashlab::to_string(cause.regions[i]);
    dropped.push_back(std::move(c));
  }
  Json j{{"found", cause.found}, {"minimal", cause.minimal}, {"checks", cause.checks}, {"dropped", dropped}};
  if (cause.torn) j["torn"] = crashlab::to_string(cause.torn_region);
  return j;
}

bool verdicts_agree(const crashlab::StateVerdict& a, const crashlab::StateVerdict& b) {
  if (a.verdict != b.verdict || a.violations.size() != b.violations.size()) return false;
  for (std::size_t i = 0; i < a.violations.size(); ++i)
    if (a.violations[i].path != b.violations[i].path) return false;
  return true;
}

std::string entry_signature(const Json& entry) {
  if (entry.at("verdict") != "pass") return crashlab::signature_of(verdict_from(entry));
  if (entry.contains("ground_truth") && entry["ground_truth"].at("verdict") != "pass")
    return "kernel only, " + crashlab::signature_of(verdict_from(entry["ground_truth"]));
  return "";
}

Json state_json(const RecordingIndex& index, const CheckedState& checked) {
  const CrashPoint& p = *checked.point;
  const crashlab::CrashState& s = *checked.state;
  const crashlab::StateVerdict& v = checked.verdict;
  Json j{{"ordinal", checked.selected->ordinal},
         {"position", checked.selected->position},
         {"point", s.point},
         {"frame", p.sequence},
         {"at", reasons(p.reasons)},
         {"last_mark", p.last_mark == crashlab::kNoMark ? Json(nullptr) : Json(index.marks()[p.last_mark].label)},
         {"marks", p.last_mark == crashlab::kNoMark ? 0 : p.last_mark + 1},
         {"strategy", crashlab::to_string(s.strategy)},
         {"volatile", p.volatile_changes.size()},
         {"kept", s.kept.size()},
         {"verdict", crashlab::to_string(v.verdict)}};
  if (s.torn) {
    Json torn = change_json(index, index.changes()[s.torn->change]);
    torn["kept_bytes"] = s.torn->bytes;
    j["torn"] = std::move(torn);
  }
  if (v.verdict == crashlab::Verdict::pass) return j;
  j["violations"] = violations_json(v.violations);
  if (!v.error.empty()) j["error"] = v.error;
  return j;
}

std::string violation_text(const Json& f) {
  std::string text = f.at("path").get<std::string>() + ": ";
  if (f.contains("expected"))
    return text + "expected " + f["expected"].get<std::string>() + ", found " + f.at("found").get<std::string>();
  return text + f.at("what").get<std::string>() + " " + f.at("how").get<std::string>();
}

void slim_entry(Json& entry) {
  const auto slim = [](Json& v) {
    if (!v.contains("violations")) return;
    for (Json& f : v["violations"]) {
      f.erase("expected");
      f.erase("found");
    }
  };
  slim(entry);
  if (entry.contains("ground_truth")) slim(entry["ground_truth"]);
}

void add_state_changes(Json& j, const RecordingIndex& index, const CrashPoint& p, const crashlab::CrashState& s) {
  Json kept = Json::array(), dropped = Json::array();
  for (const std::size_t i : p.volatile_changes) {
    if (s.torn && i == s.torn->change) continue;  // in "torn"
    const bool is_kept = std::binary_search(s.kept.begin(), s.kept.end(), i);
    (is_kept ? kept : dropped).push_back(change_json(index, index.changes()[i]));
  }
  j["kept_changes"] = kept;
  j["dropped_changes"] = dropped;
}

Results results_of(const std::string& recording, std::uint64_t recording_bytes, const std::string& filesystem,
                   bool by_kernel, const RecordingIndex& index, const crashlab::CrashChecker& checker,
                   const Shard& shard, const CheckLimits& limits, const CheckProgress& progress,
                   std::vector<StateRecord> states) {
  const crashlab::CheckOptions& o = checker.options();
  const crashlab::Enumeration& e = checker.count();
  Json strategies = Json::object();
  for (std::size_t s = 0; s < crashlab::kStrategies; ++s)
    strategies[crashlab::to_string(static_cast<crashlab::Strategy>(s))] =
        Json{{"states", e.by_strategy[s].states}, {"unique", e.by_strategy[s].unique}};
  Json units = Json::object();
  for (const auto& x : index.exports()) units[x.name] = x.atomic_unit;
  Json j{{"recording", Json{{"path", recording},
                            {"bytes", recording_bytes},
                            {"frames", index.end() + 1},
                            {"filesystem", filesystem},
                            {"checked_by", by_kernel ? "kernel" : "fast path"},
                            {"atomic_units", std::move(units)}}},
         {"options", Json{{"marks", o.points.marks},
                          {"persistence", o.points.persistence},
                          {"every", o.points.every},
                          {"none", o.strategies.none},
                          {"all", o.strategies.all},
                          {"keep", o.strategies.keep},
                          {"prefix", o.strategies.prefix},
                          {"random", o.strategies.random},
                          {"seed", o.strategies.seed},
                          {"torn", o.strategies.torn},
                          {"torn_unit", o.strategies.torn_unit},
                          {"partial_commit_blocks", o.recovery.partial_commit_blocks},
                          {"max_states", limits.max_states},
                          {"verify", limits.verify},
                          {"sample", limits.sample},
                          {"per_signature", limits.per_signature},
                          {"max_findings", limits.max_findings},
                          {"structure", limits.structure}}},
         {"enumeration", Json{{"states", e.states},
                              {"unique", e.unique},
                              {"merged_by_contents", e.fingerprints},
                              {"fingerprint_collisions", e.collisions},
                              {"strategies", strategies}}}};
  if (shard.count > 1)
    j["shard"] = Json{{"index", shard.index}, {"count", shard.count}, {"states", progress.mine}};
  j["coverage"] = coverage_json(checker, states, limits, progress);
  j["signatures"] = signatures_of(states);
  j["states"] = Json::array();
  j["verdicts"] = verdicts_json(count_verdicts(states));
  return Results{std::move(j), std::move(states)};
}

VerdictCount count_verdicts(const std::vector<StateRecord>& states) {
  VerdictCount c;
  for (const StateRecord& s : states) {
    ++c.checked;
    switch (s.verdict) {
      case crashlab::Verdict::pass: ++c.pass; break;
      case crashlab::Verdict::fail: ++c.fail; break;
      case crashlab::Verdict::needs_fsck: ++c.needs_fsck; break;
      case crashlab::Verdict::unreadable: ++c.unreadable; break;
    }
    c.verified += s.verified;
    c.verified_failing += s.truth_failing;
    c.disagree += s.verified && !s.agree;
    c.failing += s.verdict != crashlab::Verdict::pass || s.truth_failing;
  }
  return c;
}

Json read_results(const std::string& path) {
  std::filesystem::path p = path;
  if (std::filesystem::is_directory(p)) p /= "results.json";
  std::ifstream in(p);
  if (!in) throw std::runtime_error(p.string() + ": cannot be read");
  std::stringstream text;
  text << in.rdbuf();
  return parse_json(text.str(), p.string());
}

void write_results(const std::string& dir, const Results& results) {
  std::filesystem::create_directories(dir);
  const std::filesystem::path path = std::filesystem::path(dir) / "results.json";
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  write_results_text(out, results.document, results.states);
  out.close();
  if (!out) throw std::runtime_error("cannot write " + path.string());
}

namespace {

// The shards' "during_recovery" (each shard recovered every passing state
// of its own: check_command.cpp refuses N of them in a shard) joined:
// their states in the order of their ordinals, their totals summed. A
// shard checked without --during-recovery beside one checked with it is
// refused, unless it was interrupted before its recoveries.
Json merge_recoveries(const std::vector<Json>& shards, const std::vector<std::string>& names) {
  Json merged{{"recovered", 0}, {"checked", 0}, {"failing", 0}, {"disagree", 0}, {"errors", 0}};
  std::vector<Json> states;
  for (std::size_t i = 0; i < shards.size(); ++i) {
    const Json& s = shards[i];
    if (!s.contains("during_recovery")) {
      if (s.at("coverage").at("stopped") == "interrupted") continue;
      throw std::runtime_error(names[i] + ": checked without --during-recovery, other shards with it");
    }
    const Json& r = s.at("during_recovery");
    for (const char* key : {"recovered", "checked", "failing", "disagree", "errors"})
      merged[key] = merged[key].get<std::uint64_t>() + r.at(key).get<std::uint64_t>();
    for (const Json& state : r.at("states")) states.push_back(state);
  }
  std::sort(states.begin(), states.end(), [](const Json& a, const Json& b) {
    return a.at("ordinal").get<std::uint64_t>() < b.at("ordinal").get<std::uint64_t>();
  });
  merged["states"] = std::move(states);
  return merged;
}

}  // namespace

Results merge_results(const std::vector<Json>& shards, const std::vector<std::string>& names) {
  if (shards.empty()) throw std::runtime_error("no results to merge");
  const Json& first = shards.front();
  const auto shard_of = [&](std::size_t i) {
    const Json& s = shards[i];
    if (!s.contains("shard")) throw std::runtime_error(names[i] + ": not a shard's results (no \"shard\")");
    return std::pair{s["shard"].at("index").get<std::uint64_t>(), s["shard"].at("count").get<std::uint64_t>()};
  };
  const std::uint64_t count = shard_of(0).second;
  std::vector<bool> seen(count, false);
  std::vector<Json> states;
  std::string stopped;
  unsigned rounds = crashlab::CrashChecker::kRounds;
  for (std::size_t i = 0; i < shards.size(); ++i) {
    const Json& s = shards[i];
    for (const char* key : {"options", "enumeration"})
      if (s.at(key) != first.at(key))
        throw std::runtime_error(names[i] + ": its " + key + " differ from " + names[0] + "'s: not shards of one run");
    const auto differs = [&](const char* key) { return s.at("recording").at(key) != first.at("recording").at(key); };
    if (differs("bytes") || differs("frames") || differs("filesystem") || differs("checked_by"))
      throw std::runtime_error(names[i] + ": another recording than " + names[0] + "'s");
    const auto [index, n] = shard_of(i);
    if (n != count) throw std::runtime_error(names[i] + ": a shard of " + std::to_string(n) + ", not of " +
                                             std::to_string(count));
    if (seen[index]) throw std::runtime_error(names[i] + ": shard " + std::to_string(index) + " is given twice");
    seen[index] = true;
    const Json& c = s.at("coverage");
    if (!c.at("stopped").is_null()) {
      const std::string why = c["stopped"].get<std::string>();
      stopped = stopped.empty() || stopped == why ? why : "several reasons";
    }
    rounds = std::min(rounds, c.at("rounds").get<unsigned>());
    for (const Json& state : s.at("states")) states.push_back(state);
  }
  for (std::uint64_t i = 0; i < count; ++i)
    if (!seen[i]) throw std::runtime_error("shard " + std::to_string(i) + " of " + std::to_string(count) + " is missing");
  std::sort(states.begin(), states.end(), [](const Json& a, const Json& b) {
    return a.at("ordinal").get<std::uint64_t>() < b.at("ordinal").get<std::uint64_t>();
  });
  const std::uint64_t taken = first.at("coverage").at("taken").get<std::uint64_t>();
  std::vector<bool> position_seen(taken, false);
  for (const Json& s : states) {
    const std::uint64_t p = s.at("position").get<std::uint64_t>();
    if (p >= taken || position_seen[p])
      throw std::runtime_error("state " + std::to_string(s.at("ordinal").get<std::uint64_t>()) +
                               " was not checked exactly once");
    position_seen[p] = true;
  }
  if (stopped.empty() && states.size() != taken)
    throw std::runtime_error("the shards checked " + std::to_string(states.size()) + " states of the " +
                             std::to_string(taken) + " taken");
  // Each shard detailed the first failing states of each signature among
  // its own; one run, the first of all of them (each among its shard's
  // first): the others' details go, with the kernel's verdict where only
  // the details brought it.
  const Json& options = first.at("options");
  const std::uint64_t per_signature = options.at("per_signature").get<std::uint64_t>();
  const bool verify_all = options.at("verify") == "all";
  std::map<std::string, std::uint64_t> details_kept;
  for (Json& state : states) {
    state.erase("signature");
    const std::string sig = entry_signature(state);
    if (sig.empty() || !detailed(state)) continue;
    if (details_kept[sig]++ < per_signature) continue;
    for (const char* key : kDetails) state.erase(key);
    slim_entry(state);
    if (!verify_all && state.at("verdict") != "pass" && state.contains("ground_truth")) {
      state.erase("ground_truth");
      state.erase("agree");
    }
  }
  std::vector<StateRecord> all;
  all.reserve(states.size());
  for (Json& s : states) all.push_back(record_state(std::move(s)));
  Json merged = first;
  merged.erase("shard");
  if (std::any_of(shards.begin(), shards.end(), [](const Json& s) { return s.contains("during_recovery"); }))
    merged["during_recovery"] = merge_recoveries(shards, names);
  Json& coverage = merged["coverage"];
  coverage["checked"] = all.size();
  coverage["not_checked"] = coverage.at("unique").get<std::uint64_t>() - all.size();
  coverage["stopped"] = stopped.empty() ? Json(nullptr) : Json(stopped);
  coverage["rounds"] = rounds;
  count_checked(all, coverage["strategies"], coverage["points"]);
  merged["signatures"] = signatures_of(all);
  merged["states"] = Json::array();
  merged["verdicts"] = verdicts_json(count_verdicts(all));
  return Results{std::move(merged), std::move(all)};
}

}  // namespace nvj::cli
