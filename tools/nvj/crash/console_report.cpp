// SPDX-License-Identifier: BSD-3-Clause
#include "tools/nvj/crash/console_report.h"

#include <cstdio>

#include "tools/nvj/crash/results_json.h"

namespace nvj::cli {

namespace {

using crashlab::Strategy;

unsigned long long ull(std::uint64_t n) { return static_cast<unsigned long long>(n); }

// "  path: expected X, found Y" for each violation, and the error.
void describe_verdict(const Json& v, const char* indent) {
  if (v.contains("error")) std::printf("%s%s\n", indent, v["error"].get<std::string>().c_str());
  if (v.contains("violations"))
    for (const Json& f : v["violations"]) std::printf("%s%s\n", indent, violation_text(f).c_str());
}

void describe_cause(const Json& k) {
  if (!k["found"].get<bool>()) {
    std::printf("  cause: it fails with every volatile change kept: not a lost write\n");
    return;
  }
  std::string regions;
  for (const Json& d : k["dropped"]) {
    if (!regions.empty()) regions += ", ";
    regions += d["acknowledged"].get<bool>() ? "an acknowledged" : "a";
    regions += " write of " + std::to_string(d["length"].get<std::uint64_t>()) + " bytes at " +
               std::to_string(d["offset"].get<std::uint64_t>()) + " of " + d["export"].get<std::string>() + " (" +
               d["region"].get<std::string>() + ")";
  }
  const std::string torn_part = k.contains("torn") ? "the torn write (" + k["torn"].get<std::string>() + ")" : "";
  const std::string kernel =
      k.contains("ground_truth") ? " (the kernel: " + k["ground_truth"].get<std::string>() + ")" : "";
  if (k["dropped"].empty()) {
    std::printf("  cause: %s alone breaks it%s\n", torn_part.c_str(), kernel.c_str());
    return;
  }
  std::printf("  cause: dropping %zu write%s%s breaks it%s: %s%s\n", k["dropped"].size(),
              k["dropped"].size() == 1 ? "" : "s", torn_part.empty() ? "" : (" with " + torn_part).c_str(),
              k["minimal"].get<bool>() ? "" : " (not minimal: the budget ran out)", regions.c_str(), kernel.c_str());
}

}  // namespace

void print_counts(const crashlab::CrashChecker& checker, const Shard& shard) {
  const crashlab::Enumeration& e = checker.count();
  const bool sampled = !checker.plan().complete();
  std::printf("%-8s %12s %12s%s\n", "strategy", "states", "unique", sampled ? "        taken" : "");
  for (std::size_t s = 0; s < crashlab::kStrategies; ++s) {
    std::printf("%-8s %12llu %12llu", crashlab::to_string(static_cast<Strategy>(s)), ull(e.by_strategy[s].states),
                ull(e.by_strategy[s].unique));
    if (sampled) std::printf(" %12llu", ull(checker.taken_by_strategy()[s]));
    std::printf("\n");
  }
  std::printf("%-8s %12llu %12llu", "total", ull(e.states), ull(e.unique));
  if (sampled) std::printf(" %12llu", ull(checker.plan().selected));
  std::printf("\n");
  if (sampled)
    std::printf("a sample of %llu of the %llu unique states, spread over every crash point and strategy "
                "(--max-states %llu)\n",
                ull(checker.plan().selected), ull(checker.plan().unique), ull(checker.options().max_states));
  if (shard.count > 1)
    std::printf("shard %llu of %llu (from %s): %zu of the %llu states taken\n", ull(shard.index), ull(shard.count),
                shard.source.c_str(), checker.mine().size(), ull(checker.plan().selected));
  std::fflush(stdout);
}

void describe_failure(const Json& s) {
  std::string where = "point " + std::to_string(s["point"].get<std::uint64_t>()) + " (frame " +
                      std::to_string(s["frame"].get<std::uint64_t>()) + ")";
  if (!s["last_mark"].is_null()) where += ", after mark '" + s["last_mark"].get<std::string>() + "'";
  const std::uint64_t volatile_changes = s["volatile"].get<std::uint64_t>();
  const bool torn = s.contains("torn");
  std::string torn_text;
  if (torn)
    torn_text = ", one torn: " + std::to_string(s["torn"]["kept_bytes"].get<std::uint64_t>()) + " of the " +
                std::to_string(s["torn"]["length"].get<std::uint64_t>()) + " bytes at " +
                std::to_string(s["torn"]["offset"].get<std::uint64_t>()) + " of " +
                s["torn"]["export"].get<std::string>() + " kept";
  std::printf("%s: state %llu at %s, %s, %llu of %llu volatile changes dropped%s\n",
              s["verdict"].get<std::string>().c_str(), ull(s["ordinal"].get<std::uint64_t>()), where.c_str(),
              s["strategy"].get<std::string>().c_str(),
              ull(volatile_changes - s["kept"].get<std::uint64_t>() - (torn ? 1 : 0)), ull(volatile_changes),
              torn_text.c_str());
  describe_verdict(s, "  ");
  if (s.contains("cause")) describe_cause(s["cause"]);
  if (s.contains("ground_truth")) {
    const Json& g = s["ground_truth"];
    std::printf("  ground truth: %s%s\n", g["verdict"].get<std::string>().c_str(),
                s["agree"].get<bool>() ? "" : " (the fast path disagrees)");
    describe_verdict(g, "    ");
  }
}

void print_signatures(const Json& results) {
  const Json& list = results.at("signatures");
  if (list.empty()) return;
  std::printf("%zu signature%s of failing states:\n", list.size(), list.size() == 1 ? "" : "s");
  for (const Json& s : list)
    std::printf("  %s: %llu state%s (the first: %llu; %llu detailed)\n", s["signature"].get<std::string>().c_str(),
                ull(s["states"].get<std::uint64_t>()), s["states"].get<std::uint64_t>() == 1 ? "" : "s",
                ull(s["first"].get<std::uint64_t>()), ull(s["detailed"].get<std::uint64_t>()));
}

void print_coverage(const Json& results, const std::string& recording) {
  const Json& c = results.at("coverage");
  const std::uint64_t unique = c["unique"].get<std::uint64_t>(), taken = c["taken"].get<std::uint64_t>();
  const std::uint64_t checked = c["checked"].get<std::uint64_t>();
  const bool shard = results.contains("shard");
  const std::uint64_t mine = shard ? results["shard"]["states"].get<std::uint64_t>() : taken;
  if (checked == unique && !shard) return;  // everything
  std::printf("checked %llu of the %llu unique states%s", ull(checked), ull(unique),
              shard ? (" (this shard's " + std::to_string(mine) + " of the " + std::to_string(taken) + " taken)").c_str()
                    : "");
  if (taken < unique)
    std::printf(", a sample spread over %llu of the %llu crash points with states", ull(c["points"]["checked"].get<std::uint64_t>()),
                ull(c["points"]["with_states"].get<std::uint64_t>()));
  std::printf("\n");
  if (!c["stopped"].is_null())
    std::printf("the check stopped early (%s) after %u of %u rounds, %llu of the %llu states taken unchecked\n",
                c["stopped"].get<std::string>().c_str(), c["rounds"].get<unsigned>(), crashlab::CrashChecker::kRounds,
                ull(mine - checked), ull(mine));
  if (taken < unique || !c["stopped"].is_null())
    std::printf("not checked: %llu unique states; every one: nvj crash check %s --max-states 0 (or with --shard I/N "
                "on N machines)\n",
                ull(unique - checked), recording.c_str());
}

void summary_line(std::uint64_t checked, double seconds, std::uint64_t failing) {
  std::printf("%llu states checked in %.1f s (%.0f states/s), %llu failing\n", ull(checked), seconds,
              seconds > 0 ? static_cast<double>(checked) / seconds : 0.0, ull(failing));
}

}  // namespace nvj::cli
