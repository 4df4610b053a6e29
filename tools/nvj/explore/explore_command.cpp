// SPDX-License-Identifier: BSD-3-Clause
#include "tools/nvj/explore/explore_command.h"

#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <stdexcept>

#include "common/command_line.h"
#include "common/duration.h"
#include "common/json.h"
#include "crashlab/explore/fstests.h"
#include "crashlab/explore/generator.h"
#include "crashlab/explore/oracle.h"
#include "crashlab/explore/sample.h"
#include "tools/nvj/crash/lab_parameters.h"
#include "tools/nvj/crash/progress.h"
#include "tools/nvj/crash/shard.h"
#include "tools/nvj/crash/subcommands.h"
#include "tools/nvj/explore/check_pool.h"
#include "tools/nvj/explore/explore_log.h"
#include "tools/nvj/explore/explore_report.h"
#include "tools/nvj/explore/guest_explore.h"
#include "tools/nvj/explore/workload_run.h"
#include "tools/nvj/host/processes/interrupt.h"
#include "tools/nvj/host/processes/process.h"
#include "tools/nvj/host/processes/run_folder.h"
#include "tools/nvj/testbed/testbed.h"
#include "tools/nvj/vm/guest_kernel.h"

namespace nvj::cli {

namespace fs = std::filesystem;
using crashlab::explore::Generator;
using crashlab::explore::OpKind;
using crashlab::explore::Workload;

namespace {

std::vector<OpKind> ops_of(const std::string& list) {
  try {
    return crashlab::explore::op_kinds_named(list);
  } catch (const std::invalid_argument& e) {
    throw UsageError(std::string("nvj crash explore: --ops: ") + e.what());
  }
}


}  // namespace

Generator explore_generator(const ExploreArgs& a) {
  try {
    return crashlab::explore::generator_named(a.bound, ops_of(a.ops));
  } catch (const std::invalid_argument& e) {
    throw UsageError(std::string("nvj crash explore: ") + e.what());
  }
}

namespace {

// The explorer's data disk: the hdd's write cache (volatile until a flush
// or FUA) and its identity to the host (rotational, a cache), without its
// timing. A crash state is made of which writes were durable, never of
// when they completed, and the hdd's seeks and rotation were most of a
// workload's run and unmount (bench/RESULTS.md, explore and two_builds).
// A data-model= given replaces all three (data-model=hdd: the timing back).
constexpr const char* kExploreDataDisk[] = {"data-model=none", "data-write-cache=write-back", "data-rotational=yes"};

// The workloads' outcomes as they come, what explore.json says of them.
struct ExploreTally {
  bool guest = false;  // the workloads ran in a guest: each failing one has a guest reproducer too
  std::uint64_t states = 0, findings = 0, done = 0, errors = 0, oracle_errors = 0;
  std::uint64_t recovered = 0, recovery_states = 0, recovery_failing = 0;  // --during-recovery
  double phases[kExplorePhaseCount] = {};
  Json workloads = Json::array();
  int worst = 0;

  // `quiet`: an error the caller has said already.
  void add(std::uint64_t i, const Workload& w, const WorkloadOutcome& r, bool quiet = false) {
    if (!r.error.empty() && !quiet) {
      std::fprintf(stderr, "nvj crash explore: workload %llu (%s) could not run: %s\n",
                   static_cast<unsigned long long>(i), w.name.c_str(), r.error.c_str());
    }
    if (!r.oracle_error.empty()) {
      std::printf("workload %llu: %s: the oracle's error, not a finding: %s\n", static_cast<unsigned long long>(i),
                  w.name.c_str(), r.oracle_error.c_str());
      std::fflush(stdout);
    } else if (r.failing > 0) {
      const std::string cut = r.fstests_cut.is_null()
                                  ? ""
                                  : " (fstests' own cut: state " + std::to_string(r.fstests_cut.at("ordinal").get<std::uint64_t>()) +
                                        ", " + r.fstests_cut.at("verdict").get<std::string>() + ")";
      std::printf("workload %llu: %s: %llu of %llu states fail%s\n", static_cast<unsigned long long>(i), w.name.c_str(),
                  static_cast<unsigned long long>(r.failing), static_cast<unsigned long long>(r.states), cut.c_str());
      std::fflush(stdout);
    }
    if (r.oracle_error.empty() && r.recovery_fails()) {
      std::printf("workload %llu: %s: %llu of the %llu crash states of its states' recoveries fail\n",
                  static_cast<unsigned long long>(i), w.name.c_str(),
                  static_cast<unsigned long long>(r.recovery.at("failing").get<std::uint64_t>()),
                  static_cast<unsigned long long>(r.recovery.at("checked").get<std::uint64_t>()));
      std::fflush(stdout);
    }
    Json entry{{"ordinal", i},
               {"name", w.name},
               {"steps", crashlab::explore::describe_steps(w.steps)},
               {"states", r.states},
               {"failing", r.failing},
               {"error", r.error.empty() ? Json(nullptr) : Json(r.error)},
               {"oracle_error", r.oracle_error.empty() ? Json(nullptr) : Json(r.oracle_error)},
               {"failures", r.failures}};
    if (!r.fstests_cut.is_null()) entry["fstests_cut"] = r.fstests_cut;
    if (!r.recovery.is_null()) entry["during_recovery"] = r.recovery;
    if ((r.failing > 0 || r.recovery_fails()) && r.oracle_error.empty()) {
      entry["signature"] = r.signature;
      entry["reproducer"] = "workloads/" + std::to_string(i) + "/reproduce.sh";  // beside explore.json
      if (guest) entry["guest_reproducer"] = "workloads/" + std::to_string(i) + "/reproduce-guest.sh";
    }
    count(std::move(entry), std::vector<double>(std::begin(r.seconds), std::end(r.seconds)), r.status);
  }

  // An outcome an earlier run of the same exploration logged (--resume).
  void restore(const LoggedOutcome& o) {
    for (const double s : o.phases) earlier_seconds += s;
    count(o.entry, o.phases, o.status);
  }

  // A workload's explore.json entry, its phases' seconds and its check's
  // status, into the figures.
  void count(Json entry, const std::vector<double>& seconds, int status) {
    ++done;
    for (std::size_t k = 0; k < kExplorePhaseCount && k < seconds.size(); ++k) phases[k] += seconds[k];
    if (!entry.at("error").is_null()) ++errors;
    states += entry.at("states").get<std::uint64_t>();
    std::uint64_t failing_recoveries = 0;
    if (entry.contains("during_recovery")) {
      const Json& r = entry["during_recovery"];
      recovered += r.at("recovered").get<std::uint64_t>();
      recovery_states += r.at("checked").get<std::uint64_t>();
      failing_recoveries = r.at("failing").get<std::uint64_t>();
      recovery_failing += failing_recoveries;
    }
    if (!entry.at("oracle_error").is_null())
      ++oracle_errors;
    else if (entry.at("failing").get<std::uint64_t>() > 0 || failing_recoveries > 0)
      ++findings;
    if (status > 1) worst = status;
    workloads.push_back(std::move(entry));
  }
  double earlier_seconds = 0;  // the restored workloads' time

  // explore.json's figures; the caller adds what it knows beyond them.
  Json report(const ExploreArgs& a, const std::vector<std::string>& parameters, std::uint64_t max_states,
              const Generator& generator, const Shard& shard, double seconds) const {
    Json rules = Json::array();
    std::vector<const std::vector<crashlab::explore::Rule>*> tables{&crashlab::explore::rules()};
    if (a.bound == "fstests") tables.push_back(&crashlab::explore::fstests_rules());
    for (const auto* table : tables)
      for (const auto& r : *table)
        if (std::string(r.level) != "tested" || a.promises == "tested")
          rules.push_back(Json{{"id", r.id}, {"promise", r.promise}, {"source", r.source}, {"level", r.level}});
    Json phase_json = Json::object();
    for (std::size_t k = 0; k < kExplorePhaseCount; ++k) phase_json[kExplorePhases[k]] = phases[k];
    Json ops = Json::array();
    for (const OpKind k : ops_of(a.ops)) ops.push_back(to_string(k));
    return Json{{"bound", a.bound},
                {"ops", ops},
                {"filesystem", a.filesystem},
                {"mount_options", a.mount_options},
                {"promises", a.promises},
                {"parameters", parameters},
                {"max_states", max_states},
                {"structure", a.structure},
                {"periodic_commit", a.periodic_commit},
                {"during_recovery", a.during_recovery_given
                                        ? Json{{"per_workload", a.during_recovery},
                                               {"recovered", recovered},
                                               {"checked", recovery_states},
                                               {"failing", recovery_failing}}
                                        : Json(nullptr)},
                {"sample", a.sample > 0 ? Json{{"workloads", a.sample}, {"seed", a.seed}} : Json(nullptr)},
                {"workloads_in_bound", generator.count()},
                {"shard", Json{{"index", shard.index}, {"count", shard.count}}},
                {"explored", done},
                {"states", states},
                {"findings", findings},
                {"errors", errors},
                {"oracle_errors", oracle_errors},
                {"seconds", seconds},
                {"phases", phase_json},
                {"interrupted", interrupted()},
                {"rules", rules},
                {"workloads", workloads}};
  }

  void print_summary(const char* prefix, double seconds) const {
    std::printf("%s%llu workloads, %llu states checked in %.1f s, %llu findings\n", prefix,
                static_cast<unsigned long long>(done), static_cast<unsigned long long>(states), seconds,
                static_cast<unsigned long long>(findings));
    if (recovered > 0)
      std::printf("(during recovery: %llu states recovered, %llu crash states of their recoveries checked, %llu failing)\n",
                  static_cast<unsigned long long>(recovered), static_cast<unsigned long long>(recovery_states),
                  static_cast<unsigned long long>(recovery_failing));
    if (errors > 0) std::printf("(%llu workloads could not run: see explore.json)\n", static_cast<unsigned long long>(errors));
    if (oracle_errors > 0)
      std::printf("(%llu workloads broke a fact in their own final state: the oracle's errors, not findings; see "
                  "explore.json)\n",
                  static_cast<unsigned long long>(oracle_errors));
  }

  int status() const {
    if (interrupted() || errors > 0 || oracle_errors > 0) return 1;
    if (worst > 1) return worst;
    return findings > 0 ? 1 : 0;
  }
};

// A line every 30 s while workloads run: how many are explored (before
// this run too), the rate of this run, the time left at that rate.
class ExploreProgress {
 public:
  ExploreProgress(std::size_t total, std::size_t before) : total_(total), before_(before) {}
  void one_more() {
    ++done_;
    const auto now = std::chrono::steady_clock::now();
    if (now - last_ < std::chrono::seconds(30) && before_ + done_ < total_) return;
    last_ = now;
    const double seconds = std::chrono::duration<double>(now - start_).count();
    const std::size_t explored = before_ + done_;
    const std::string left = Progress::time_left(done_, total_ - before_, seconds);
    std::printf("== %zu of %zu workloads explored (%zu%%), %.2f workloads/s%s%s\n", explored, total_,
                explored * 100 / std::max<std::size_t>(total_, 1), static_cast<double>(done_) / std::max(seconds, 1e-9),
                left.empty() ? "" : ", ", left.c_str());
    std::fflush(stdout);
  }

 private:
  std::size_t total_, before_, done_ = 0;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now(), last_ = start_;
};

// The lab the workloads run on: its phases said as they start, given up on
// an interrupt.
TestbedOptions explore_testbed(const ExploreArgs& a, const std::vector<std::string>& parameters,
                               const RunFolder& folder) {
  TestbedOptions o{folder.path(), parameters, a.mount_options, [](const std::string& what) {
                     if (interrupted()) throw std::runtime_error("interrupted");
                     std::printf("== %s\n", what.c_str());
                     std::fflush(stdout);
                   }};
  o.filesystem = a.filesystem;
  if (a.filesystem == "btrfs") o.exports = {"data"};
  return o;
}

// A failing workload's minimal form (minimize()), into its explore.json
// `entry`, and said when it is smaller.
void add_minimal(const ExploreContext& context, std::uint64_t i, const Workload& w, const WorkloadOutcome& r,
                 const fs::path& out, Json& entry) {
  const fs::path dir = out / "workloads" / std::to_string(i) / "minimal";
  const MinimalWorkload m = minimize(context, w, r, dir);
  Json& j = entry["minimal"];
  j = Json{{"name", m.workload.name},
           {"steps", crashlab::explore::describe_steps(m.workload.steps)},
           {"failing", m.outcome.failing},
           {"states", m.outcome.states}};
  j["reproducer"] = m.dir.empty() ? "workloads/" + std::to_string(i) + "/reproduce.sh"
                                  : fs::relative(m.dir / "reproduce.sh", out).string();
  if (m.workload.name != w.name)
    std::printf("  minimal: %s: %llu of %llu states fail\n", m.workload.name.c_str(),
                static_cast<unsigned long long>(m.outcome.failing), static_cast<unsigned long long>(m.outcome.states));
}

using AccountWorkload = std::function<void(std::uint64_t, const Workload&, const WorkloadOutcome&)>;

// The workloads of `mine` not `finished`, each recorded on the lab, then
// checked in a child process while the lab records the next ones
// (check_pool.h), and given to `account` once checked. Not btrfs: its
// checks mount a state's copy of the lab's filesystem beside the lab's
// own, and btrfs takes devices of one fsid for one filesystem's (XFS
// refuses a second mount of one UUID, so its checks mount with nouuid).
void record_and_check(const ExploreContext& context, const Generator& generator, const std::vector<std::uint64_t>& mine,
                      const std::set<std::uint64_t>& finished, const fs::path& out, const AccountWorkload& account) {
  const bool overlap = context.args.filesystem != "btrfs";
  CheckPool checks(context, default_check_slots());
  const auto collect = [&](bool all) {
    for (const CheckedWorkload& c : checks.finished(all)) account(c.ordinal, c.workload, c.outcome);
  };
  for (const std::uint64_t i : mine) {
    if (interrupted()) break;
    if (finished.count(i) != 0) continue;
    const Workload w = generator.at(i);
    const fs::path dir = out / "workloads" / std::to_string(i);
    RecordedWorkload recorded;
    try {
      recorded = record_workload(context, w, dir);
    } catch (const std::exception&) {
      if (interrupted()) break;  // a step of the lab gave up on the signal
      throw;
    }
    if (!recorded.outcome.error.empty()) {
      account(i, w, recorded.outcome);  // nothing to check
    } else if (overlap) {
      checks.start(i, w, dir, std::move(recorded));
    } else {
      check_workload(context, w, dir, recorded.trace, recorded.outcome);
      account(i, w, recorded.outcome);
    }
    collect(false);
  }
  if (interrupted())
    checks.stop();  // their workloads run again on --resume
  else
    collect(true);
}

// In the plan's order, whichever run explored each.
void sort_as_planned(Json& workloads, const std::vector<std::uint64_t>& mine) {
  std::map<std::uint64_t, std::size_t> position;
  for (std::size_t k = 0; k < mine.size(); ++k) position[mine[k]] = k;
  std::stable_sort(workloads.begin(), workloads.end(), [&](const Json& x, const Json& y) {
    return position.at(x.at("ordinal").get<std::uint64_t>()) < position.at(y.at("ordinal").get<std::uint64_t>());
  });
}

// The workloads on this host: one server, one attach, the base restored
// before each; those with an outcome `before` (--resume) not run again.
int explore_here(const ExploreArgs& a, const std::vector<std::string>& parameters, std::uint64_t max_states,
                 const Generator& generator, const Shard& shard, const std::vector<std::uint64_t>& mine,
                 const std::vector<LoggedOutcome>& before, const fs::path& out, RunFolder& folder) {
  Testbed lab(explore_testbed(a, parameters, folder));
  std::optional<MountedBase> base;
  const ExploreContext context{&lab, a, max_states, folder, "", &base};
  lab.unmount();
  lab.post("/base/keep");
  // What an earlier run of this exploration finished (--resume), and the
  // log each workload's outcome joins as it ends.
  ExploreTally tally;
  std::set<std::uint64_t> finished;
  for (const LoggedOutcome& earlier : before) {
    finished.insert(earlier.ordinal);
    tally.restore(earlier);
  }
  OutcomeLog log(out);
  std::printf("== exploring %zu of the %llu workloads of %s%s%s\n", mine.size(),
              static_cast<unsigned long long>(generator.count()), a.bound.c_str(),
              shard.count > 1 ? (" (shard " + std::to_string(shard.index) + "/" + std::to_string(shard.count) + ")").c_str() : "",
              finished.empty() ? "" : (", " + std::to_string(finished.size()) + " of them explored before").c_str());
  std::fflush(stdout);
  const auto start = std::chrono::steady_clock::now();
  ExploreProgress progress(mine.size(), finished.size());
  // A workload checked: its verdicts counted, minimized if it fails, its
  // outcome logged, its folder removed if it passes and only failing ones
  // stay.
  const auto account = [&](std::uint64_t i, const Workload& w, const WorkloadOutcome& r) {
    tally.add(i, w, r);
    if (r.failing > 0 && r.oracle_error.empty() && !a.no_minimize && !generator.listed() &&
        r.signature.find(" + ") != std::string::npos)
      add_minimal(context, i, w, r, out, tally.workloads.back());
    log.append({i, tally.workloads.back(), std::vector<double>(std::begin(r.seconds), std::end(r.seconds)), r.status});
    if (a.keep_workloads == "failing" && r.failing == 0 && !r.recovery_fails() && r.error.empty() &&
        r.oracle_error.empty())
      fs::remove_all(out / "workloads" / std::to_string(i));
    progress.one_more();
  };
  record_and_check(context, generator, mine, finished, out, account);
  sort_as_planned(tally.workloads, mine);
  const double seconds = tally.earlier_seconds + seconds_since(start);
  if (interrupted())
    std::printf("== interrupted: nvj crash explore --resume %s goes on with the %zu workloads left\n", out.c_str(),
                mine.size() - tally.done);
  if (!lab.teardown()) throw std::runtime_error("taking the lab down failed (see above)");
  write_explore_report(tally.report(a, parameters, max_states, generator, shard, seconds), out);
  tally.print_summary("", seconds);
  return tally.status();
}

// The kernels --vm boots: those given, or the distribution's.
std::vector<GuestKernel> kernels_of(const ExploreArgs& a) {
  std::vector<GuestKernel> out = named_kernels(a.kernels, "nvj crash explore");
  if (out.empty()) out.push_back(distribution_kernel("nvj crash explore --vm"));
  return out;
}

// The workloads in a guest, once per kernel: OUT/VERSION/ holds each
// kernel's exploration as one run on the host writes it, OUT/kernels.json
// and OUT/kernels.md set them side by side.
int explore_in_guests(const ExploreArgs& a, const std::vector<GuestKernel>& kernels, const std::vector<std::string>& parameters,
                      std::uint64_t max_states, const Generator& generator, const Shard& shard,
                      const std::vector<std::uint64_t>& mine, const fs::path& out, RunFolder& folder) {
  const auto start = std::chrono::steady_clock::now();
  Json by_kernel = Json::array();
  int worst = 0;
  ExploreTally total;
  for (const GuestKernel& kernel : kernels) {
    if (interrupted()) break;
    const fs::path dir = out / kernel.version;
    std::printf("== kernel %s: booting a guest for %zu workloads of %s\n", describe_kernel(kernel).c_str(), mine.size(),
                a.bound.c_str());
    std::fflush(stdout);
    GuestExplore guest;
    try {
      guest = explore_in_guest({&a, parameters, kernel, mine, dir, folder.path()});
    } catch (const std::exception&) {
      if (interrupted()) break;  // the guest was stopped on the signal: report what the kernels before it found
      throw;
    }
    std::printf("== kernel %s: the guest ran %zu of %zu workloads in %.1f s%s; checking their recordings\n",
                kernel.version.c_str(), guest.traces.size(), mine.size(), guest.seconds,
                guest.status == 0 ? "" : (" (it stopped early: status " + std::to_string(guest.status) + ")").c_str());
    std::fflush(stdout);
    const ExploreContext context{nullptr, a, max_states, folder, reproducible_name(kernel)};
    const auto checking = std::chrono::steady_clock::now();
    ExploreTally tally;
    tally.guest = true;
    Json failing = Json::object();
    for (const std::uint64_t i : mine) {
      if (interrupted()) break;
      const Workload w = generator.at(i);
      WorkloadOutcome r;
      const auto trace = guest.traces.find(i);
      if (trace == guest.traces.end())
        r.error = "the guest did not run it (its command exited " + std::to_string(guest.status) + ": see above)";
      else
        check_workload(context, w, dir / "workloads" / std::to_string(i), trace->second, r);
      tally.add(i, w, r, trace == guest.traces.end());
      failing[std::to_string(i)] = r.error.empty() ? Json(r.failing) : Json(nullptr);
    }
    const double seconds = guest.seconds + seconds_since(checking);
    Json report = tally.report(a, parameters, max_states, generator, shard, seconds);
    report["kernel"] = guest_kernel_json(kernel);
    report["kernel"]["guest_seconds"] = guest.seconds;
    report["kernel"]["guest_cpus"] = guest_cpus(a);
    write_explore_report(report, dir);
    tally.print_summary(("kernel " + kernel.version + ": ").c_str(), seconds);
    by_kernel.push_back(Json{{"version", kernel.version},
                             {"image", kernel.image.string()},
                             {"name", kernel.name},
                             {"image_sha256", kernel.image_sha256},
                             {"packages", guest_kernel_json(kernel).at("packages")},
                             {"explored", tally.done},
                             {"states", tally.states},
                             {"findings", tally.findings},
                             {"errors", tally.errors},
                             {"oracle_errors", tally.oracle_errors},
                             {"seconds", seconds},
                             {"failing", failing}});
    total.done += tally.done;
    total.states += tally.states;
    total.findings += tally.findings;
    total.errors += tally.errors;
    total.oracle_errors += tally.oracle_errors;
    worst = std::max(worst, tally.worst);
  }
  total.worst = worst;
  Json names = Json::object();
  for (const std::uint64_t i : mine) names[std::to_string(i)] = generator.at(i).name;
  write_kernel_table(Json{{"bound", a.bound}, {"filesystem", a.filesystem}, {"mount_options", a.mount_options},
                          {"guest_cpus", guest_cpus(a)}, {"workloads", names}, {"kernels", by_kernel}},
                     out);
  total.print_summary("", seconds_since(start));
  return total.status();
}

}  // namespace

namespace {

// The options an exploration runs with, as plan.json keeps them: every one
// that decides what is explored and how, the shard resolved.
Json plan_options(const ExploreArgs& a, const Shard& shard) {
  return Json{{"filesystem", a.filesystem},   {"bound", a.bound},
              {"ops", a.ops},                 {"mount_options", a.mount_options},
              {"promises", a.promises},       {"parameters", a.parameters},
              {"shard", std::to_string(shard.index) + "/" + std::to_string(shard.count)},
              {"workload", a.workload},       {"no_minimize", a.no_minimize},
              {"max_states", a.max_states},   {"max_states_given", a.max_states_given},
              {"structure", a.structure},     {"sample", a.sample},
              {"seed", a.seed},               {"keep_workloads", a.keep_workloads},
              {"periodic_commit", a.periodic_commit},
              {"during_recovery", a.during_recovery_given ? Json(a.during_recovery) : Json(nullptr)}};
}

// --resume OUT: the options OUT/plan.json keeps, and its workloads (the
// command line gives none with it but --keep-run).
ExploreArgs resumed(const ExploreArgs& given, ExplorePlan& plan) {
  try {
    plan = read_plan(fs::absolute(given.resume));
    const Json& o = plan.options;
    ExploreArgs a;
    a.filesystem = o.at("filesystem").get<std::string>();
    a.bound = o.at("bound").get<std::string>();
    a.ops = o.at("ops").get<std::string>();
    a.mount_options = o.at("mount_options").get<std::string>();
    a.promises = o.at("promises").get<std::string>();
    a.parameters = o.at("parameters").get<std::vector<std::string>>();
    a.shard = o.at("shard").get<std::string>();
    a.workload = o.at("workload").get<std::string>();
    a.no_minimize = o.at("no_minimize").get<bool>();
    a.max_states = o.at("max_states").get<std::uint64_t>();
    a.max_states_given = o.at("max_states_given").get<bool>();
    a.structure = o.at("structure").get<std::string>();
    a.sample = o.at("sample").get<std::uint64_t>();
    a.seed = o.at("seed").get<std::uint64_t>();
    a.seed_given = a.sample > 0;
    a.keep_workloads = o.value("keep_workloads", std::string("all"));
    a.periodic_commit = o.value("periodic_commit", false);  // commit=1 is in its mount_options already
    if (o.contains("during_recovery") && !o["during_recovery"].is_null()) {
      a.during_recovery = o["during_recovery"].get<std::uint64_t>();
      a.during_recovery_given = true;
    }
    a.out = given.resume;
    a.resume = given.resume;
    a.keep = given.keep;
    return a;
  } catch (const Json::exception& e) {
    throw UsageError("nvj crash explore --resume " + given.resume + ": its plan.json's options: " + e.what());
  } catch (const std::runtime_error& e) {
    throw UsageError("nvj crash explore --resume: " + std::string(e.what()));
  }
}

// The plugin's parameters: the crash lab's layout, the journal's live
// decoder off (a restore would confuse it), the data disk without its
// timing (kExploreDataDisk), the user's parameters over all.
std::vector<std::string> explore_parameters(const ExploreArgs& a) {
  std::vector<std::string> more{"journal-trace=off"};
  const bool model_given = std::any_of(a.parameters.begin(), a.parameters.end(),
                                       [](const std::string& p) { return p.rfind("data-model=", 0) == 0; });
  if (!model_given) more.insert(more.end(), std::begin(kExploreDataDisk), std::end(kExploreDataDisk));
  return parameters_over_defaults(a.filesystem, a.parameters, "nvj crash explore", "", more);
}

// --workload N[,N]...: those, in order, once each.
std::vector<std::uint64_t> workloads_given(const ExploreArgs& a, const Generator& generator) {
  std::vector<std::uint64_t> only;
  std::stringstream list(a.workload);
  std::set<std::uint64_t> seen;
  for (std::string word; std::getline(list, word, ',');) {
    std::uint64_t n = 0;
    const auto [end, ec] = std::from_chars(word.data(), word.data() + word.size(), n);
    if (word.empty() || ec != std::errc() || end != word.data() + word.size() || n >= generator.count())
      throw UsageError("nvj crash explore: --workload " + a.workload + ": '" + word + "' is no ordinal from 0 to " +
                       std::to_string(generator.count() - 1) + " (" + a.bound + " has " +
                       std::to_string(generator.count()) + " workloads)");
    if (!seen.insert(n).second) throw UsageError("nvj crash explore: --workload " + a.workload + ": " + word + " is given twice");
    only.push_back(n);
  }
  if (!a.workload.empty() && a.workload.back() == ',')
    throw UsageError("nvj crash explore: --workload " + a.workload + ": an empty ordinal");
  return only;
}

// The workloads this run explores: those of --workload (`only`), else this
// shard's share of --sample's draw or of the whole bound.
std::vector<std::uint64_t> workloads_of_run(const ExploreArgs& a, const Generator& generator, const Shard& shard,
                                            const std::vector<std::uint64_t>& only) {
  std::vector<std::uint64_t> mine = only;
  if (a.sample > 0) {
    // The sample of the whole bound, then this shard's share of it.
    if (!a.workload.empty()) throw UsageError("nvj crash explore: --sample draws the workloads: not with --workload");
    if (a.sample > generator.count())
      throw UsageError("nvj crash explore: --sample " + std::to_string(a.sample) + ": " + a.bound + " has " +
                       std::to_string(generator.count()) + " workloads");
    const std::vector<std::uint64_t> drawn = crashlab::explore::sample_ordinals(generator.count(), a.sample, a.seed);
    for (std::size_t k = shard.index; k < drawn.size(); k += shard.count) mine.push_back(drawn[k]);
  } else if (only.empty()) {
    for (std::uint64_t i = shard.index; i < generator.count(); i += shard.count) mine.push_back(i);
  }
  if (a.sample > 0)  // on stderr with --list, whose output is the workloads
    std::fprintf(a.list ? stderr : stdout, "== a sample of %llu workloads of %s, seed %llu (--seed %llu draws it again)\n",
                 static_cast<unsigned long long>(a.sample), a.bound.c_str(), static_cast<unsigned long long>(a.seed),
                 static_cast<unsigned long long>(a.seed));
  return mine;
}

// --resume: the outcomes logged so far, each of a workload of the plan, once.
std::vector<LoggedOutcome> resumed_outcomes(const ExploreArgs& a, const ExplorePlan& plan,
                                            const std::vector<std::uint64_t>& mine) {
  std::vector<LoggedOutcome> before;
  if (a.resume.empty()) return before;
  if (plan.workloads != mine)
    throw UsageError("nvj crash explore --resume " + a.resume + ": its plan.json lists other workloads than its options name (" +
                     std::to_string(plan.workloads.size()) + " against " + std::to_string(mine.size()) + ")");
  try {
    before = read_outcomes(fs::absolute(a.resume));
  } catch (const std::runtime_error& e) {
    throw UsageError("nvj crash explore --resume: " + std::string(e.what()));
  }
  const std::set<std::uint64_t> planned(mine.begin(), mine.end());
  std::set<std::uint64_t> seen;
  for (const LoggedOutcome& o : before)
    if (planned.count(o.ordinal) == 0 || !seen.insert(o.ordinal).second)
      throw UsageError("nvj crash explore --resume " + a.resume + ": outcomes.jsonl: workload " + std::to_string(o.ordinal) +
                       (planned.count(o.ordinal) == 0 ? " is not in the plan" : " is there twice"));
  return before;
}

// --periodic-commit on a new exploration: ext4's, its commit=1 added to the
// mount options (a resumed one has it in its plan's).
void add_periodic_commit(ExploreArgs& a) {
  if (!a.periodic_commit || !a.resume.empty()) return;
  if (a.filesystem != "ext4")
    throw UsageError("nvj crash explore: --periodic-commit is ext4's (it waits for the periodic commit of commit=1), not " +
                     a.filesystem + "'s");
  const std::string options = "," + a.mount_options + ",";
  if (options.find(",commit=") != std::string::npos)
    throw UsageError("nvj crash explore: --periodic-commit mounts with commit=1 and waits for it: --mount-options '" +
                     a.mount_options + "' must not set commit= too");
  a.mount_options += std::string(a.mount_options.empty() ? "" : ",") + "commit=1";
}

// XFS and btrfs: this host has their mkfs.
void check_mkfs(const ExploreArgs& a) {
  if (a.filesystem == "ext4") return;
  const std::string mkfs = a.filesystem == "xfs" ? "mkfs.xfs" : "mkfs.btrfs";
  if (run({"sh", "-c", "command -v " + mkfs}).status != 0)
    throw UsageError("nvj crash explore: --fs " + a.filesystem + ": this host cannot make it (" + mkfs +
                     " is not installed: Debian's " + (a.filesystem == "xfs" ? "xfsprogs" : "btrfs-progs") + ")");
}

}  // namespace

int crash_explore_main(const ExploreArgs& given) {
  ExplorePlan plan;
  ExploreArgs a = given.resume.empty() ? given : resumed(given, plan);
  if (a.seed_given && a.sample == 0) throw UsageError("nvj crash explore: --seed is --sample's");
  if (a.sample > 0 && !a.seed_given) {  // a seed of its own, said so that it can be drawn again
    std::random_device entropy;
    a.seed = (std::uint64_t{entropy()} << 32) | entropy();
    a.seed_given = true;
  }

  if (!a.resume.empty() && a.promises != "posix" && a.promises != "tested")
    throw UsageError("nvj crash explore --resume " + a.resume + ": its plan's promises '" + a.promises +
                     "': expected posix or tested");
  const Generator generator = explore_generator(a);
  if (a.filesystem != "ext4" && a.filesystem != "xfs" && a.filesystem != "btrfs")
    throw UsageError("nvj crash explore: --fs " + a.filesystem + ": expected ext4, xfs or btrfs");
  add_periodic_commit(a);
  if (!a.kernels.empty() && !a.vm) throw UsageError("nvj crash explore: --kernel is --vm's (the guest's kernel)");
  if (a.cpus != 0 && !a.vm) throw UsageError("nvj crash explore: --cpus is --vm's (the guest's processors)");
  if (a.during_recovery_given && a.vm)
    throw UsageError("nvj crash explore: --during-recovery recovers the states with this host's kernel: not with --vm "
                     "(the guest's kernel ran the workloads)");
  const std::vector<std::string> parameters = explore_parameters(a);
  const std::uint64_t max_states = a.max_states;
  const std::vector<std::uint64_t> only = workloads_given(a, generator);
  const Shard shard = shard_given_or_from_environment(a.shard);
  const std::vector<std::uint64_t> mine = workloads_of_run(a, generator, shard, only);
  const std::vector<LoggedOutcome> before = resumed_outcomes(a, plan, mine);
  if (a.list) {
    for (const std::uint64_t i : mine) std::printf("%llu\t%s\n", static_cast<unsigned long long>(i), generator.at(i).name.c_str());
    return 0;
  }
  if (a.out.empty()) throw UsageError("nvj crash explore: --out DIR is required (or --list)");
  if (::geteuid() != 0) throw std::runtime_error("nvj crash explore needs root: it attaches block devices and mounts them");
  // The kernels named are found (or fetched) before anything is made.
  const std::vector<GuestKernel> kernels = a.vm ? kernels_of(a) : std::vector<GuestKernel>{};
  const fs::path out = fs::absolute(a.out);
  if (a.resume.empty() && fs::exists(out / "plan.json"))
    throw UsageError("nvj crash explore: --out " + a.out + " holds an exploration already (plan.json): --resume " +
                     a.out + " goes on with it; another --out starts a new one");
  fs::create_directories(out);
  catch_interrupts();
  RunFolder folder("explore");
  if (a.keep) folder.keep();
  check_mkfs(a);
  if (a.vm) return explore_in_guests(a, kernels, parameters, max_states, generator, shard, mine, out, folder);
  if (a.resume.empty()) {
    // A new exploration: its plan, and no outcome of another one.
    fs::remove(out / "outcomes.jsonl");
    write_plan(out, {plan_options(a, shard), mine});
  }
  return explore_here(a, parameters, max_states, generator, shard, mine, before, out, folder);
}

namespace {

constexpr const char* kExploreText = R"(Explore by itself: run every workload of a bound (seq-1: one core operation
and a persistence call; seq-2: two; seq-3: three) over a fixed file set
(directories A, B, A/C; files A/foo, A/bar, B/foo, B/bar, A/C/foo), or
fstests' power-fail scenarios (--bound fstests: each generic test that cuts
the power and checks what survived, its steps and the facts it asserts,
citing it; docs/explore-rules.md lists them and the ones left out), each on
the same freshly made filesystem (the server's kept base, restored between
workloads), with the facts its persistence calls promise (each from a rule
citing its source: docs/explore-rules.md) posted as it goes, and check every
crash state of each workload's recording as nvj crash check does (the fast
path; the kernel confirms the failing states). OUT/explore.json holds every
workload, its states and its failures with the rule each broke;
OUT/workloads/N/ its recording, results.json and check log. --list prints
the workloads (ordinal and name) without running them. Ends with one line:
W workloads, S states checked in T s, F findings. With --vm a QEMU guest
runs the workloads, one boot for all of them, once per --kernel: OUT/VERSION/
holds each kernel's exploration, OUT/kernels.md and kernels.json set the
kernels side by side (the workloads whose verdict differs first); the
recordings are checked on this host. On this host a run lasts:
OUT/plan.json names its workloads before the first, OUT/outcomes.jsonl
gains each one's outcome as it ends, and --resume OUT goes on where a run
killed or interrupted stopped, ending with the explore.json of a run never
stopped. Exit status 0 when no state fails, 1 when one does, 2 for bad
input.
)";

// The options that say what is explored: the filesystem and its parameters, the bound,
// the operations, the mount options and the rules' level.
void declare_bound_options(Command& explores, const std::shared_ptr<ExploreArgs>& explore,
                           std::vector<Option>& decides) {
  decides.push_back(
      explores.add("PARAM", explore->parameters, "the plugin's PARAM=VALUE, over the defaults").value_name("PARAM=VALUE"));
  decides.push_back(explores.choice("--fs", explore->filesystem, {"ext4", "xfs", "btrfs"}, "the filesystem (default ext4)"));
  decides.push_back(explores
                        .add("--bound", explore->bound,
                             "seq-1 (default), seq-2 or seq-3: core operations per workload; seq-3-data, "
                             "seq-3-metadata, seq-3-nested: seq-3 narrowed as ACE narrowed it; fstests: the scenarios "
                             "of fstests' power-fail tests, each with the facts its test asserts")
                        .value_name("BOUND"));
  decides.push_back(
      explores.add("--ops", explore->ops, "the core operations to draw from, comma-separated (default: all)").value_name("LIST"));
  decides.push_back(explores.add("--mount-options", explore->mount_options, "the workloads' mount options (journal_path= is added)")
                        .value_name("OPTIONS"));
  decides.push_back(explores.choice("--promises", explore->promises, {"posix", "tested"},
                                    "the rules' level: posix (default), what POSIX and the filesystems' documents promise; "
                                    "tested, that and what fstests' power-fail tests hold the filesystems to "
                                    "(docs/explore-rules.md)"));
}

// The options that choose which workloads of the bound run.
void declare_selection_options(Command& explores, const std::shared_ptr<ExploreArgs>& explore,
                               std::vector<Option>& decides) {
  decides.push_back(explores
                        .add("--shard", explore->shard,
                             "this run's share of the workloads, I/N (default: Slurm's or Kubernetes' index, else all)")
                        .value_name("I/N"));
  decides.push_back(
      explores.add("--workload", explore->workload, "only these workloads (their ordinals in --list, comma-separated)")
          .value_name("N[,N]..."));
  decides.push_back(explores.flag("--list", explore->list, "print the workloads, one per line, and run none"));
  decides.push_back(explores
                        .count("--sample", explore->sample, 1, std::uint64_t{1} << 40,
                               "a uniform random sample of N workloads of the bound (its seed printed and in "
                               "explore.json), shared out by --shard as the whole bound is")
                        .value_name("N"));
  decides.push_back(explores
                        .count("--seed", explore->seed, 0, ~std::uint64_t{0},
                               "with --sample, the seed that draws it (default: a random one)")
                        .value_name("S")
                        .on_given([explore] { explore->seed_given = true; }));
}

// The options that say how the workloads run and are checked.
void declare_run_options(Command& explores, const std::shared_ptr<ExploreArgs>& explore,
                         std::vector<Option>& decides) {
  decides.push_back(explores.flag("--no-minimize", explore->no_minimize,
                                  "leave failing workloads of seq-2 and seq-3 as they are (default: their core steps "
                                  "reduced while they fail the same way)"));
  decides.push_back(explores
                        .count("--max-states", explore->max_states, 0, std::uint64_t{1} << 40,
                               "unique crash states checked per workload at most, a sample over its crash points "
                               "(default 0: every one, on every filesystem)")
                        .value_name("N")
                        .on_given([explore] { explore->max_states_given = true; }));
  decides.push_back(explores.flag("--periodic-commit", explore->periodic_commit,
                                  "ext4: after each core operation, before its persistence call, every file's dirty "
                                  "pages written back as the kernel's flusher does (no flush) and 2 s for the "
                                  "journal's periodic commit (commit=1 added to the mount options): the crash states "
                                  "of a system left alone for a moment, which the unmount's commit hides otherwise"));
  decides.push_back(explores.choice("--structure", explore->structure, {"every", "none"},
                                    "ext4: e2fsck on the structure of every state, each recovered metadata image once "
                                    "(default: every); none: the facts alone"));
  decides.push_back(explores.flag("--vm", explore->vm,
                                  "run the workloads in a QEMU guest, one boot for all of them (as nvj vm), once per kernel"));
  decides.push_back(explores
                        .add("--kernel", explore->kernels,
                             "with --vm, the guest's kernel: a bzImage, a folder, debian:SUITE or "
                             "debian:PACKAGE[=VERSION]; several, comma-separated or repeated, for a table by kernel "
                             "(default: the distribution's)")
                        .value_name("KERNEL[,KERNEL]..."));
  decides.push_back(explores
                        .count("--cpus", explore->cpus, 1u, 64u,
                               "with --vm, the guest's processors (default 1); with more, the kernel's own threads "
                               "(the journal's among them) run beside the workloads, as on a real machine, and "
                               "losses that depend on their timing show more often")
                        .value_name("N"));
  decides.push_back(explores
                        .count("--during-recovery", explore->during_recovery, 0, ~std::uint64_t{0},
                               "recover N of each workload's passing states again (0: every one) under a recording "
                               "and check every crash state of each recovery against the state's facts (as nvj crash "
                               "check --during-recovery; on this host)")
                        .value_name("N")
                        .on_given([explore] { explore->during_recovery_given = true; }));
  decides.push_back(explores.choice("--keep-workloads", explore->keep_workloads, {"all", "failing"},
                                    "the workloads whose folders stay in OUT/workloads/: all (default), or failing "
                                    "(a failing state or an error; a passing workload's folder, about 0.5 MB on ext4, "
                                    "is removed once its outcome is logged: for long bounds)"));
}

}  // namespace

CrashSubcommand declare_crash_explore(Command& crash) {
  auto explore = std::make_shared<ExploreArgs>();
  Command explores = crash.subcommand("explore", "generate workloads and check every crash state of each");
  explores.describe(kExploreText);
  // What decides an exploration: --resume takes it from the plan, and none with it.
  std::vector<Option> decides;
  declare_bound_options(explores, explore, decides);
  declare_selection_options(explores, explore, decides);
  declare_run_options(explores, explore, decides);
  explores.flag("--keep-run", explore->keep, "leave the run folder (the server's log) behind");
  decides.push_back(
      explores.add("--out", explore->out, "the folder for explore.json and each workload's check (required to run)")
          .value_name("DIR"));
  Option resume = explores
                      .add("--resume", explore->resume,
                           "go on with the exploration in DIR where it stopped (killed, interrupted, preempted), with "
                           "the options its plan.json keeps, exploring the workloads it had not finished; it ends with "
                           "the explore.json of a run never stopped")
                      .value_name("DIR");
  for (const Option& o : decides) resume.excludes(o);
  return {explores, [explore] { return crash_explore_main(*explore); }};
}

}  // namespace nvj::cli
