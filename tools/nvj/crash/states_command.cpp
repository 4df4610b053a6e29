// SPDX-License-Identifier: BSD-3-Clause
// nvj crash states: read a recording (the plugin's record=, POST
// /record/start) and say which crash states of it would be checked: the
// crash points, the changes volatile at each, and the states per strategy
// with identical contents merged (crashlab/states/crash_states.h).
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>

#include "common/json.h"
#include "crashlab/judge/state_walk.h"
#include "crashlab/states/crash_points.h"
#include "crashlab/states/crash_states.h"
#include "crashlab/index/recording_index.h"
#include "tools/nvj/crash/state_options.h"
#include "tools/nvj/crash/subcommands.h"
#include "tools/nvj/host/files/mapped_file.h"

namespace nvj::cli {
namespace {

using crashlab::CrashPoint;
using crashlab::Enumeration;
using crashlab::RecordingIndex;
using crashlab::Strategy;

constexpr const char* kStatesText = R"(Read RECORDING (the plugin's record=) and count the crash states that would be
checked: the crash points (after every mark, every flush or FUA completion,
optionally every N changes, and the end), the changes volatile at each, and
per strategy the states tried and those with contents no earlier state had.
)";

struct StatesArgs {
  std::string recording;
  bool no_marks = false, no_persistence = false, json = false;
  std::uint64_t every = 0;
  crashlab::StrategyOptions strategies;
};

// Marks that are facts; a malformed one is an error naming the mark.
std::size_t count_facts(const RecordingIndex& index) {
  std::size_t facts = 0;
  for (const auto& f : crashlab::facts_of(index)) facts += f.has_value();
  return facts;
}

std::string mib(std::uint64_t bytes) { return fmt::format("{:.1f} MiB", static_cast<double>(bytes) / 1048576.0); }

int states_main(const StatesArgs& a) {
  const MappedFile file(a.recording);
  const RecordingIndex index(file.bytes());
  const std::size_t facts = count_facts(index);
  crashlab::CrashPointOptions where;
  where.marks = !a.no_marks;
  where.persistence = !a.no_persistence;
  where.every = a.every;
  const std::vector<CrashPoint> points = crashlab::crash_points(index, where);
  const Enumeration e = crashlab::enumerate_crash_states(index, points, a.strategies, {});

  std::size_t at_marks = 0, at_persistence = 0, at_every = 0, most = 0, sum = 0;
  for (const CrashPoint& p : points) {
    at_marks += (p.reasons & crashlab::kAtMark) != 0;
    at_persistence += (p.reasons & crashlab::kAtPersistence) != 0;
    at_every += (p.reasons & crashlab::kAtEvery) != 0;
    most = std::max(most, p.volatile_changes.size());
    sum += p.volatile_changes.size();
  }
  if (a.json) {
    Json exports = Json::array();
    for (const auto& x : index.exports()) exports.push_back(Json{{"name", x.name}, {"size", x.size}});
    Json strategies = Json::object();
    for (std::size_t s = 0; s < crashlab::kStrategies; ++s)
      strategies[crashlab::to_string(static_cast<Strategy>(s))] =
          Json{{"states", e.by_strategy[s].states}, {"unique", e.by_strategy[s].unique}};
    const Json out{{"recording", a.recording},
                   {"exports", exports},
                   {"changes", index.changes().size()},
                   {"flushes", index.flushes().size()},
                   {"marks", index.marks().size()},
                   {"facts", facts},
                   {"stopped", index.stopped() ? Json(index.stop_reason()) : Json(nullptr)},
                   {"points", Json{{"total", points.size()},
                                   {"at_marks", at_marks},
                                   {"at_persistence", at_persistence},
                                   {"every", at_every},
                                   {"volatile_max", most},
                                   {"volatile_mean", points.empty() ? 0.0
                                                                    : json_round(static_cast<double>(sum) /
                                                                                     static_cast<double>(points.size()),
                                                                                 2)}}},
                   {"strategies", strategies},
                   {"states", e.states},
                   {"unique", e.unique},
                   {"merged_by_contents", e.fingerprints}};
    std::printf("%s\n", to_json_text(out).c_str());
    return 0;
  }
  std::string exports;
  for (const auto& x : index.exports()) exports += (exports.empty() ? "" : ", ") + x.name + " " + mib(x.size);
  std::printf("%s: %zu export(s) (%s), %zu changes, %zu flushes, %zu marks (%zu facts)\n", a.recording.c_str(),
              index.exports().size(), exports.c_str(), index.changes().size(), index.flushes().size(),
              index.marks().size(), facts);
  if (index.stopped()) std::printf("  the recording was stopped early: %s\n", index.stop_reason().c_str());
  if (crashlab::marks_only(index))
    std::printf("  its exports' order is known only at its marks (two dm-log-writes logs): crash points there and at "
                "the end only\n");
  std::string every;
  if (a.every > 0) every = fmt::format(", {} after every {} changes", at_every, a.every);
  std::printf("crash points: %zu (%zu after marks, %zu after persistence points%s, 1 at the end)\n", points.size(),
              at_marks, at_persistence, every.c_str());
  std::printf("volatile changes per point: at most %zu, %.1f on average\n", most,
              points.empty() ? 0.0 : static_cast<double>(sum) / static_cast<double>(points.size()));
  std::printf("%-8s %12s %12s\n", "strategy", "states", "unique");
  for (std::size_t s = 0; s < crashlab::kStrategies; ++s)
    std::printf("%-8s %12llu %12llu\n", crashlab::to_string(static_cast<Strategy>(s)),
                static_cast<unsigned long long>(e.by_strategy[s].states),
                static_cast<unsigned long long>(e.by_strategy[s].unique));
  std::printf("%-8s %12llu %12llu\n", "total", static_cast<unsigned long long>(e.states),
              static_cast<unsigned long long>(e.unique));
  std::printf(e.fingerprints ? "(states with identical contents are counted once under unique)\n"
                             : "(changes off 512-byte sectors, or over 2 GiB of them: states are not merged by contents)\n");
  return 0;
}

}  // namespace

CrashSubcommand declare_crash_states(Command& crash) {
  auto a = std::make_shared<StatesArgs>();
  Command states = crash.subcommand("states", "count a recording's crash points and states per strategy");
  states.describe(kStatesText);
  states.add("RECORDING", a->recording, "the recording (record=FILE)").value_name("FILE");
  enumeration_options(states, a->every, a->no_marks, a->no_persistence, a->strategies);
  states.flag("--json", a->json, "one JSON object");
  return {states, [a] {
            check_torn_unit(a->strategies, "nvj crash states");
            if (a->recording.empty()) throw UsageError("nvj crash states: which RECORDING?");
            return states_main(*a);
          }};
}

}  // namespace nvj::cli
