// SPDX-License-Identifier: BSD-3-Clause
#include "tools/nvj/explore/workload_run.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>

#include "common/query_escape.h"
#include "crashlab/explore/generator.h"
#include "crashlab/explore/oracle.h"
#include "crashlab/facts/fact.h"
#include "tools/nvj/crash/check_command.h"
#include "tools/nvj/crash/results_json.h"
#include "tools/nvj/explore/reproducer.h"
#include "tools/nvj/host/files/output_to_file.h"
#include "tools/nvj/host/devices/loop_device.h"
#include "tools/nvj/host/processes/interrupt.h"

namespace nvj::cli {

namespace fs = std::filesystem;
using crashlab::explore::Workload;

namespace {

// auto_da_alloc's rule holds in data=ordered (the default) and data=journal,
// unless noauto_da_alloc turns it off.
bool auto_da_alloc(const std::string& options) {
  std::stringstream in(options);
  bool on = true;
  for (std::string o; std::getline(in, o, ',');) {
    if (o == "noauto_da_alloc" || o == "data=writeback") on = false;
    if (o == "auto_da_alloc") on = true;
  }
  return on;
}

// data=writeback, the last data= of the options: stale data may show.
bool data_writeback(const std::string& options) {
  std::stringstream in(options);
  bool writeback = false;
  for (std::string o; std::getline(in, o, ',');)
    if (o.rfind("data=", 0) == 0) writeback = o == "data=writeback";
  return writeback;
}

// A JSON string's text, without its quotes.
std::string json_words(const Json& j) {
  std::string text = to_json_text(j);
  return text.size() >= 2 && text.front() == '"' ? text.substr(1, text.size() - 2) : text;
}

// Seconds since the last call, into phase i.
class ExplorePhaseClock {
 public:
  void lap(double* into) {
    const auto now = std::chrono::steady_clock::now();
    *into += std::chrono::duration<double>(now - last_).count();
    last_ = now;
  }

 private:
  std::chrono::steady_clock::time_point last_ = std::chrono::steady_clock::now();
};

// Whether two failures break something the same way (the same rule, what and how).
bool fails_alike(const WorkloadOutcome& a, const WorkloadOutcome& b) {
  return std::any_of(a.broke.begin(), a.broke.end(),
                     [&](const std::string& item) {
                       return item != "unreadable" && item != "needs_fsck" && b.broke.count(item) != 0;
                     });
}

}  // namespace

crashlab::explore::OracleOptions oracle_options(const ExploreArgs& a) {
  return {a.filesystem == "ext4" && auto_da_alloc(a.mount_options),
          !(a.filesystem == "ext4" && data_writeback(a.mount_options)), a.promises == "tested"};
}

std::string describe(const MountedBase& b) {
  return "root inode " + std::to_string(b.root_ino) + " with " + std::to_string(b.root_links) + " links, " +
         std::to_string(b.blocks_free) + " of " + std::to_string(b.blocks) + " blocks and " + std::to_string(b.files_free) +
         " of " + std::to_string(b.files) + " inodes free";
}

MountedBase mounted_base(const fs::path& mount_point) {
  struct stat st {};
  struct statvfs vfs {};
  if (::stat(mount_point.c_str(), &st) != 0 || ::statvfs(mount_point.c_str(), &vfs) != 0)
    throw std::runtime_error("stat " + mount_point.string() + ": " + std::strerror(errno));
  return {st.st_ino, st.st_nlink, vfs.f_blocks, vfs.f_bfree, vfs.f_files, vfs.f_ffree};
}

WorkloadOutcome run_workload(const ExploreContext& context, const Workload& w, const fs::path& dir) {
  RecordedWorkload recorded = record_workload(context, w, dir);
  if (recorded.outcome.error.empty()) check_workload(context, w, dir, recorded.trace, recorded.outcome);
  return recorded.outcome;
}

RecordedWorkload record_workload(const ExploreContext& context, const Workload& w, const fs::path& dir) {
  if (context.lab == nullptr) throw std::logic_error("record_workload: no lab on this host");
  Testbed& lab = *context.lab;
  RecordedWorkload recorded;
  WorkloadOutcome& o = recorded.outcome;
  ExplorePhaseClock clock;
  fs::create_directories(dir);
  const fs::path recording = fs::absolute(dir / "recording.nvjrec");
  fs::remove(recording);
  // Restored, recorded and mounted; the base as mounted against the first
  // mount's. A difference (the host served something else than the base)
  // is tried once more from the restore, the whole host's caches dropped,
  // then the workload's error: no verdict on states built from another base
  // than the kernel read.
  for (int attempt = 1;; ++attempt) {
    lab.post("/base/restore");
    drop_block_cache(lab.data_device());
    if (!lab.journal_device().empty()) drop_block_cache(lab.journal_device());
    lab.post("/record/start?file=" + query_escape(recording.string()));
    clock.lap(&o.seconds[0]);
    lab.mount();
    clock.lap(&o.seconds[1]);
    if (context.base == nullptr) break;
    const MountedBase seen = mounted_base(lab.mount_point());
    if (!context.base->has_value()) *context.base = seen;
    if (seen == **context.base) break;
    const std::string what = "the base as mounted is not the kept base (" + describe(seen) + "; kept: " +
                             describe(**context.base) + ")";
    lab.unmount();
    lab.post("/record/stop");
    fs::remove(recording);
    if (attempt == 2) {
      o.error = what;
      return recorded;
    }
    std::fprintf(stderr, "nvj crash explore: workload %s: %s: restoring it again\n", w.name.c_str(), what.c_str());
    run_checked({"sh", "-c", "sync && echo 3 >/proc/sys/vm/drop_caches"});
  }
  recorded.trace =
      workloads::run_workload_steps(lab.mount_point(), w, oracle_options(context.args),
                                    [&](const std::string& label) { lab.post("/mark?label=" + query_escape(label)); },
                                    {context.args.periodic_commit});
  clock.lap(&o.seconds[2]);
  lab.unmount();
  lab.post("/record/stop");
  clock.lap(&o.seconds[3]);
  if (!recorded.trace.error.empty()) o.error = recorded.trace.error;
  return recorded;
}

namespace {

// The rule of each fact posted, in the order posted (the recording's marks'
// order): the keys a violation finds it by, the path and what a violation
// will call it ("PATH\tfile"), and the path alone (but for nostale facts,
// posted after every operation: a violation without a key of its own falls
// back on the path's other facts).
struct PostedRule {
  std::string keyed;  // "PATH\tWHAT"; empty: none
  std::string path;   // empty: not for the path alone
  std::string rule;   // empty: a fact of no rule (its key is then no one's)
};
using RuleOf = std::vector<PostedRule>;

// The rule of the fact a violation broke: the last posted among the first
// `marks` (those in force at the state's crash point) that says something of
// its path, by what the violation calls it first, then by the path alone;
// empty if none.
std::string rule_in_force(const RuleOf& posted, std::size_t marks, const std::string& path, const std::string& what) {
  const std::size_t n = std::min(marks, posted.size());
  for (const bool by_what : {true, false})
    for (std::size_t k = n; k-- > 0;) {
      const PostedRule& p = posted[k];
      if (by_what ? p.keyed == path + "\t" + what : p.path == path) return p.rule;
    }
  return "";
}

// What a violation of `fact` is called on the path it names, as the
// checker names it; null for a kind no violation names.
const char* violation_name(crashlab::FactKind kind) {
  using crashlab::FactKind;
  static const std::map<FactKind, const char*> kWhat{
      {FactKind::file, "file"},     {FactKind::prefix, "prefix"}, {FactKind::entry, "present"},
      {FactKind::rename, "renamed"}, {FactKind::absent, "absent"}, {FactKind::mode, "mode"},
      {FactKind::nlink, "nlink"},   {FactKind::symlink, "symlink"}, {FactKind::xattr, "xattr"},
      {FactKind::noxattr, "xattr"}, {FactKind::nostale, "stale"}};
  const auto named = kWhat.find(kind);
  return named == kWhat.end() ? nullptr : named->second;
}

// From the trace: the steps with the facts posted around each (for the
// reproducer) and the rule behind each path's last fact.
RuleOf rules_of_trace(const Workload& w, const workloads::ExploreTrace& trace, std::vector<ReproducerStep>& script) {
  RuleOf rule_of;
  for (const workloads::TracedStep& t : trace.steps) {
    script.push_back({t.step, {}, {}, {}});
    for (const auto* facts : {&t.before, &t.written, &t.after})
      for (const workloads::PostedFact& f : *facts) {
        (facts == &t.before ? script.back().before : facts == &t.written ? script.back().written : script.back().after)
            .push_back(f.label);
        rule_of.push_back({});
        if (f.rule.empty()) continue;
        const std::optional<crashlab::Fact> parsed = crashlab::parse_fact(f.label);
        if (!parsed) throw std::runtime_error("the trace of " + w.name + " posted " + f.label + ", which is no fact");
        const crashlab::Fact& fact = *parsed;
        using crashlab::FactKind;
        // As the checker names the path of a violation.
        const std::string path = fact.kind == FactKind::entry
                                     ? (fact.path == "." ? fact.second : fact.path + "/" + fact.second)
                                 : fact.kind == FactKind::rename ? fact.path + " | " + fact.second
                                                                 : fact.path;
        PostedRule& posted = rule_of.back();
        posted.rule = f.rule;
        if (const char* what = violation_name(fact.kind)) posted.keyed = path + "\t" + what;
        if (fact.kind != FactKind::nostale) posted.path = path;
      }
  }
  return rule_of;
}

// nvj crash check of one workload's recording, as the explorer runs it.
CheckArgs workload_check(const ExploreContext& context, const fs::path& recording, const fs::path& dir) {
  const ExploreArgs& a = context.args;
  CheckArgs check;
  check.recording = recording.string();
  check.out = dir.string();
  check.shard = "0/1";
  // ext4: the fast path, the kernel confirming the failing states; the
  // others: the kernel checks every state it takes (a budget's sample).
  check.verify = a.filesystem == "ext4" ? "failing" : "";
  check.per_signature = 1;
  check.max_states = context.max_states;
  check.max_states_given = true;
  check.structure = a.structure;
  check.mount_options = a.mount_options;
  check.run_folder = &context.folder;
  check.plots_when_passing = false;  // nvj crash report draws them from results.json
  check.during_recovery = a.during_recovery;
  check.during_recovery_given = a.during_recovery_given;
  return check;
}

// An oracle error when the final state (every write kept) does not pass:
// the facts were wrong, not the filesystem.
std::string final_state_error(const Json& results) {
  const Json& last = results.at("final_state");
  if (last.at("verdict") == "pass") return "";
  std::string error = "its final state (every write kept) is " + last.at("verdict").get<std::string>();
  if (last.contains("error")) error += ": " + last["error"].get<std::string>();
  if (last.contains("violations"))
    for (const Json& v : last["violations"]) error += "; " + violation_text(v);
  return error;
}

// The failing states counted, the first 3 kept with each violation's rule
// and its source; where none of those broke a fact and a later one did, the
// first such one in the third's place (the states a structure check fails
// can come first, and a rule broken says more).
void collect_failures(const Json& results, const RuleOf& rule_of, WorkloadOutcome& o) {
  bool broke_fact = false;
  for (const Json& s : results.at("states")) {
    if (s.at("verdict") == "pass") continue;
    ++o.failing;
    const bool violations = s.contains("violations") && !s.at("violations").empty();
    if (o.failures.size() >= 3 && (broke_fact || !violations)) continue;
    if (o.failures.size() >= 3) o.failures.erase(o.failures.end() - 1);
    broke_fact = broke_fact || violations;
    Json f{{"ordinal", s.at("ordinal")}, {"verdict", s.at("verdict")}};
    if (s.contains("violations"))
      for (Json v : s.at("violations")) {
        // The facts in force at the state's crash point: the marks up to it,
        // posted in the trace's order (every mark of a workload's recording
        // is a fact its trace posted).
        const std::string r = rule_in_force(rule_of, s.at("marks").get<std::size_t>(), v.at("path").get<std::string>(),
                                            v.at("what").get<std::string>());
        if (!r.empty()) {
          v["rule"] = r;
          v["source"] = crashlab::explore::rule(r).source;
          v["level"] = crashlab::explore::rule(r).level;
        }
        f["violations"].push_back(v);
      }
    o.failures.push_back(f);
  }
}

// The state fstests' power cut leaves: at the first crash point after the
// trace's last fact, every write the devices acknowledged kept (dm-flakey's
// table swap waits for the writes in flight, then drops every later one;
// nothing it keeps sat in a volatile cache).
Json fstests_cut(const Json& results, const workloads::ExploreTrace& trace, std::uint64_t failing) {
  std::string last;
  for (const workloads::TracedStep& t : trace.steps)
    for (const auto* facts : {&t.before, &t.written, &t.after})
      if (!facts->empty()) last = facts->back().label;
  const Json* cut = nullptr;
  for (const Json& s : results.at("states"))
    if (!last.empty() && s.at("kept") == s.at("volatile") && s.at("last_mark").is_string() && s.at("last_mark") == last &&
        (cut == nullptr || s.at("point").get<std::uint64_t>() < cut->at("point").get<std::uint64_t>()))
      cut = &s;
  if (cut == nullptr) return nullptr;
  const bool fails = cut->at("verdict") != "pass";
  return Json{{"ordinal", cut->at("ordinal")}, {"verdict", cut->at("verdict")},
              {"failing_elsewhere", failing - (fails ? 1 : 0)}};
}

// What the first failing states broke, and by which operations.
void sign_failure(const Workload& w, WorkloadOutcome& o) {
  for (const Json& f : o.failures)
    if (f.contains("violations"))
      for (const Json& v : f.at("violations"))
        o.broke.insert((v.contains("rule") ? json_words(v.at("rule")) : std::string("no rule")) + ": " +
                       json_words(v.at("what")) + " " + json_words(v.at("how")));
    else
      o.broke.insert(json_words(f.at("verdict")));
  for (const std::string& b : o.broke) o.signature += (o.signature.empty() ? "" : ", ") + b;
  std::string ops;
  for (const auto& s : w.steps)
    if (!s.setup) ops += (ops.empty() ? "" : " + ") + std::string(to_string(s.op.kind));
  o.signature += " | " + ops;
}

// explore.json's account of a workload's recoveries (results.json's
// "during_recovery" without the per-state detail).
Json recovery_summary(const Json& r) {
  Json failing_states = Json::array();
  for (const Json& s : r.at("states"))
    if (s.value("failing", std::uint64_t{0}) > 0) failing_states.push_back(s.at("ordinal"));
  return Json{{"recovered", r.at("recovered")}, {"checked", r.at("checked")},     {"failing", r.at("failing")},
              {"errors", r.at("errors")},       {"states", std::move(failing_states)}};
}

}  // namespace

void check_workload(const ExploreContext& context, const Workload& w, const fs::path& dir,
                    const workloads::ExploreTrace& trace, WorkloadOutcome& o) {
  const ExploreArgs& a = context.args;
  if (!trace.error.empty()) {
    o.error = trace.error;
    return;
  }
  ExplorePhaseClock clock;
  std::vector<ReproducerStep> script;
  const RuleOf rule_of = rules_of_trace(w, trace, script);
  {
    OutputToFile log(dir / "check.log");
    o.status = crash_check_main(workload_check(context, fs::absolute(dir / "recording.nvjrec"), dir));
  }
  clock.lap(&o.seconds[4]);
  std::ifstream in(dir / "results.json");
  std::stringstream text;
  text << in.rdbuf();
  const Json results = parse_json(text.str(), (dir / "results.json").string());
  o.states = results.at("coverage").at("checked").get<std::uint64_t>();
  o.oracle_error = final_state_error(results);
  if (o.status == 1) {
    std::ofstream(dir / "reproduce.sh") << reproducer_script(w, a.bound, a.mount_options, a.parameters, script, a.periodic_commit);
    if (!context.guest_kernel.empty())
      std::ofstream(dir / "reproduce-guest.sh")
          << guest_reproducer_script(w, a.bound, a.ops, a.mount_options, a.parameters, oracle_options(a), {a.periodic_commit},
                                     context.guest_kernel, guest_cpus(a));
  }
  collect_failures(results, rule_of, o);
  if (o.failing > 0) sign_failure(w, o);
  if (a.bound == "fstests") o.fstests_cut = fstests_cut(results, trace, o.failing);
  if (results.contains("during_recovery")) o.recovery = recovery_summary(results.at("during_recovery"));
  if (o.failing == 0 && o.recovery_fails()) {  // the states pass, a recovery of one does not
    o.broke.insert("during recovery");
    sign_failure(w, o);
  }
}

MinimalWorkload minimize(const ExploreContext& context, const Workload& w, const WorkloadOutcome& failed, const fs::path& dir) {
  using crashlab::explore::Step;
  std::vector<Step> core;
  for (const Step& s : w.steps)
    if (!s.setup) core.push_back(s);
  MinimalWorkload best{w, failed, {}};
  int tries = 0;
  for (bool smaller = true; smaller && core.size() > 1;) {
    smaller = false;
    for (std::size_t i = 0; i < core.size() && !interrupted(); ++i) {
      std::vector<Step> fewer = core;
      fewer.erase(fewer.begin() + static_cast<std::ptrdiff_t>(i));
      if (fewer.back().persist == crashlab::explore::Persist::none) continue;
      Workload t;
      t.ordinal = w.ordinal;
      t.name = name_of(fewer);
      t.steps = crashlab::explore::with_setup(fewer);
      const fs::path try_dir = dir / ("try-" + std::to_string(++tries));
      WorkloadOutcome r = run_workload(context, t, try_dir);
      if (r.failing == 0 || !fails_alike(r, failed)) continue;
      core = fewer;
      best = {t, r, try_dir};
      smaller = true;
      break;
    }
  }
  return best;
}


}  // namespace nvj::cli
