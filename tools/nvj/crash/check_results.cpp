#include "tools/nvj/crash/check_results.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace nvj::cli {

namespace {

using crashlab::CheckedState;
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

}  // namespace

Json verdicts_json(const VerdictCount& c) {
  return Json{{"checked", c.checked},       {"pass", c.pass},
              {"fail", c.fail},             {"unreadable", c.unreadable},
              {"failing", c.failing},       {"ground_truth", c.verified},
              {"ground_truth_failing", c.verified_failing}, {"disagree", c.disagree}};
}

Json verdict_json(const crashlab::StateVerdict& v) {
  Json j{{"verdict", crashlab::to_string(v.verdict)}};
  if (!v.violations.empty()) {
    Json violations = Json::array();
    for (const auto& f : v.violations)
      violations.push_back(Json{{"path", f.path}, {"expected", f.expected}, {"found", f.found}});
    j["violations"] = violations;
  }
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

Json state_json(const RecordingIndex& index, const CheckedState& checked) {
  const CrashPoint& p = *checked.point;
  const crashlab::CrashState& s = *checked.state;
  const crashlab::StateVerdict& v = checked.verdict;
  Json j{{"ordinal", checked.ordinal},
         {"point", s.point},
         {"frame", p.sequence},
         {"at", reasons(p.reasons)},
         {"last_mark", p.last_mark == crashlab::kNoMark ? Json(nullptr) : Json(index.marks()[p.last_mark].label)},
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
  Json violations = Json::array();
  for (const auto& f : v.violations)
    violations.push_back(Json{{"path", f.path}, {"expected", f.expected}, {"found", f.found}});
  j["violations"] = violations;
  if (!v.error.empty()) j["error"] = v.error;
  Json kept = Json::array(), dropped = Json::array();
  for (const std::size_t i : p.volatile_changes) {
    if (s.torn && i == s.torn->change) continue;  // in "torn"
    const bool is_kept = std::binary_search(s.kept.begin(), s.kept.end(), i);
    (is_kept ? kept : dropped).push_back(change_json(index, index.changes()[i]));
  }
  j["kept_changes"] = kept;
  j["dropped_changes"] = dropped;
  return j;
}

Json results_json(const std::string& recording, std::uint64_t recording_bytes, const std::string& filesystem,
                  const RecordingIndex& index,
                  const crashlab::CheckOptions& o, const crashlab::Enumeration& e, const Shard& shard,
                  std::uint64_t minimize, Json states) {
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
                          {"minimize", minimize}}},
         {"enumeration", Json{{"states", e.states},
                              {"unique", e.unique},
                              {"merged_by_contents", e.fingerprints},
                              {"strategies", strategies}}}};
  if (shard.count > 1) j["shard"] = Json{{"index", shard.index}, {"count", shard.count}};
  j["states"] = std::move(states);
  const VerdictCount c = count_verdicts(j);
  j["verdicts"] = verdicts_json(c);
  return j;
}

VerdictCount count_verdicts(const Json& results) {
  VerdictCount c;
  for (const Json& s : results.at("states")) {
    ++c.checked;
    const std::string v = s.at("verdict").get<std::string>();
    if (v == "pass") ++c.pass;
    else if (v == "fail") ++c.fail;
    else ++c.unreadable;
    bool failing = v != "pass";
    if (s.contains("ground_truth")) {
      ++c.verified;
      const bool truth_fails = s["ground_truth"].at("verdict") != "pass";
      c.verified_failing += truth_fails;
      c.disagree += !s.at("agree").get<bool>();
      failing = failing || truth_fails;
    }
    c.failing += failing;
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

Json merge_results(const std::vector<Json>& shards, const std::vector<std::string>& names) {
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
  for (std::size_t i = 0; i < shards.size(); ++i) {
    const Json& s = shards[i];
    for (const char* key : {"options", "enumeration"})
      if (s.at(key) != first.at(key))
        throw std::runtime_error(names[i] + ": its " + key + " differ from " + names[0] + "'s: not shards of one run");
    const auto differs = [&](const char* key) { return s.at("recording").at(key) != first.at("recording").at(key); };
    if (differs("bytes") || differs("frames") || differs("filesystem"))
      throw std::runtime_error(names[i] + ": another recording than " + names[0] + "'s");
    const auto [index, n] = shard_of(i);
    if (n != count) throw std::runtime_error(names[i] + ": a shard of " + std::to_string(n) + ", not of " +
                                             std::to_string(count));
    if (seen[index]) throw std::runtime_error(names[i] + ": shard " + std::to_string(index) + " is given twice");
    seen[index] = true;
    for (const Json& state : s.at("states")) states.push_back(state);
  }
  for (std::uint64_t i = 0; i < count; ++i)
    if (!seen[i]) throw std::runtime_error("shard " + std::to_string(i) + " of " + std::to_string(count) + " is missing");
  std::sort(states.begin(), states.end(), [](const Json& a, const Json& b) {
    return a.at("ordinal").get<std::uint64_t>() < b.at("ordinal").get<std::uint64_t>();
  });
  const std::uint64_t unique = first.at("enumeration").at("unique").get<std::uint64_t>();
  if (states.size() != unique)
    throw std::runtime_error("the shards checked " + std::to_string(states.size()) + " states of " +
                             std::to_string(unique));
  for (std::uint64_t i = 0; i < states.size(); ++i)
    if (states[i].at("ordinal").get<std::uint64_t>() != i)
      throw std::runtime_error("state " + std::to_string(i) + " was not checked exactly once");
  // Each shard minimized the causes of its own first failing states; one
  // run, those of the first `minimize` of all of them (each of which is
  // among its shard's first): the others' causes go.
  const std::uint64_t minimize = first.at("options").at("minimize").get<std::uint64_t>();
  std::uint64_t failing = 0;
  for (Json& state : states)
    if (state.at("verdict") == "fail" && failing++ >= minimize) state.erase("cause");
  Json merged = first;
  merged.erase("shard");
  merged["states"] = Json(std::move(states));
  const VerdictCount c = count_verdicts(merged);
  merged["verdicts"] = verdicts_json(c);
  return merged;
}

}  // namespace nvj::cli
