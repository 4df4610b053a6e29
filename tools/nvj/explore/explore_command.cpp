#include "tools/nvj/explore/explore_command.h"

#include <fcntl.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstring>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>

#include "common/command_line.h"
#include "common/json.h"
#include "common/query_escape.h"
#include "common/unique_fd.h"
#include "crashlab/explore/generator.h"
#include "crashlab/explore/oracle.h"
#include "tools/nvj/crash/check_command.h"
#include "tools/nvj/crash/shard.h"
#include "tools/nvj/explore/explore_report.h"
#include "tools/nvj/explore/op_runner.h"
#include "tools/nvj/explore/reproducer.h"
#include "tools/nvj/host/interrupt.h"
#include "tools/nvj/host/process.h"
#include "tools/nvj/host/run_folder.h"
#include "tools/nvj/testbed/testbed.h"

namespace nvj::cli {

namespace fs = std::filesystem;
using crashlab::explore::Generator;
using crashlab::explore::OpKind;
using crashlab::explore::Workload;

namespace {

// A workload's states the kernel checks at most by default, where it checks
// them one by one (XFS, btrfs: about 10 a second here).
constexpr std::uint64_t kKernelExploreBudget = 40;

int bound_of(const std::string& bound) {
  if (bound == "seq-1") return 1;
  if (bound == "seq-2") return 2;
  if (bound == "seq-3") return 3;
  throw UsageError("nvj crash explore: --bound " + (bound.empty() ? std::string("''") : bound) +
                   ": expected seq-1, seq-2 or seq-3");
}

std::vector<OpKind> ops_of(const std::string& list) {
  std::vector<OpKind> out;
  if (list.empty()) return out;
  std::stringstream in(list);
  for (std::string name; std::getline(in, name, ',');) {
    try {
      out.push_back(crashlab::explore::op_kind_named(name));
    } catch (const std::invalid_argument& e) {
      throw UsageError(std::string("nvj crash explore: --ops: ") + e.what());
    }
  }
  return out;
}

// The plugin's parameters: the crash lab's default layout (ext4, its journal
// on an NVRAM export, its data on a disk with a volatile cache; XFS the same
// with its log on the NVRAM export, btrfs on the data export alone, both
// made here on blank exports, as nvj crash run makes them), the journal's
// live decoder off (a restore would confuse it), then the user's.
std::vector<std::string> server_parameters(const std::string& filesystem, const std::vector<std::string>& given) {
  std::vector<std::string> out{filesystem == "xfs" ? "data=512M" : "data=256M",
                               filesystem == "xfs" ? "journal=64M" : "journal=32M", "data-model=hdd",
                               "journal-model=nvram", "journal-trace=off"};
  if (filesystem != "ext4") out.push_back("fs=none");
  for (const std::string& g : given) {
    const std::size_t eq = g.find('=');
    if (eq == std::string::npos || eq == 0)
      throw UsageError("nvj crash explore: '" + g + "' is no PARAM=VALUE");
    const std::string key = g.substr(0, eq);
    if (key == "record" || key == "control") throw UsageError("nvj crash explore: " + key + "= is its own to set");
    if (filesystem != "ext4" && key == "fs" && g != "fs=none")
      throw UsageError("nvj crash explore: " + g + " with --fs " + filesystem + ": " + filesystem +
                       " is made on blank exports (fs=none)");
    std::erase_if(out, [&](const std::string& d) { return d.substr(0, d.find('=')) == key; });
    if (key == "fs-journal" && g.substr(eq + 1).rfind("external", 0) != 0)
      std::erase_if(out, [](const std::string& d) { return d.rfind("journal=", 0) == 0; });
    if (eq + 1 < g.size()) out.push_back(g);
  }
  return out;
}

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

void drop_cache(const std::string& device) {
  if (device.empty()) return;
  UniqueFd fd(::open(device.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0 || ::ioctl(fd.get(), BLKFLSBUF, 0) != 0)
    throw std::runtime_error("flush the cache of " + device + ": " + std::strerror(errno));
}

// stdout and stderr into `file` while it lives (nvj crash check's report
// and progress for one workload).
class OutputTo {
 public:
  explicit OutputTo(const fs::path& file) {
    std::fflush(stdout);
    std::fflush(stderr);
    saved_out_ = ::dup(STDOUT_FILENO);
    saved_err_ = ::dup(STDERR_FILENO);
    const int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (saved_out_ < 0 || saved_err_ < 0 || fd < 0)
      throw std::runtime_error("open " + file.string() + ": " + std::strerror(errno));
    ::dup2(fd, STDOUT_FILENO);
    ::dup2(fd, STDERR_FILENO);
    ::close(fd);
  }
  ~OutputTo() {
    std::fflush(stdout);
    std::fflush(stderr);
    ::dup2(saved_out_, STDOUT_FILENO);
    ::dup2(saved_err_, STDERR_FILENO);
    ::close(saved_out_);
    ::close(saved_err_);
  }
  OutputTo(const OutputTo&) = delete;
  OutputTo& operator=(const OutputTo&) = delete;

 private:
  int saved_out_ = -1, saved_err_ = -1;
};

// A JSON string's text, without its quotes.
std::string words(const Json& j) {
  std::string text = to_json_text(j);
  return text.size() >= 2 && text.front() == '"' ? text.substr(1, text.size() - 2) : text;
}

// Where a workload's time goes, in the order it goes there.
constexpr const char* kPhases[] = {"restore and record", "mount", "steps and facts", "unmount", "check"};
constexpr std::size_t kPhaseCount = std::size(kPhases);

// Seconds since the last call, into phase i.
class PhaseClock {
 public:
  void lap(double* into) {
    const auto now = std::chrono::steady_clock::now();
    *into += std::chrono::duration<double>(now - last_).count();
    last_ = now;
  }

 private:
  std::chrono::steady_clock::time_point last_ = std::chrono::steady_clock::now();
};

struct Outcome {
  double seconds[kPhaseCount] = {};
  std::string error;  // a step that failed (the workload was not checked)
  std::string signature;  // a failing workload's: the rules broken, what and how, the core operations
  int status = 0;     // nvj crash check's
  std::uint64_t states = 0, failing = 0;
  Json failures = Json::array();
};

// One workload on the mounted lab: the base restored, recorded, run with
// its facts, unmounted, checked.
Outcome explore_one(Testbed& lab, const Workload& w, const fs::path& dir, const ExploreArgs& a, std::uint64_t max_states,
                    const RunFolder& folder) {
  Outcome o;
  PhaseClock clock;
  fs::create_directories(dir);
  const fs::path recording = fs::absolute(dir / "recording.nvjrec");
  fs::remove(recording);
  lab.post("/base/restore");
  drop_cache(lab.data_device());
  drop_cache(lab.journal_device());
  lab.post("/record/start?file=" + query_escape(recording.string()));
  crashlab::explore::Oracle oracle({a.filesystem == "ext4" && auto_da_alloc(a.mount_options)});
  std::map<std::string, std::string> rule_of;  // path: the rule of the last fact that said something of it
  std::vector<ReproducerStep> script;
  const auto post = [&](const std::vector<crashlab::explore::RuledFact>& facts, std::vector<std::string>& labels) {
    for (const auto& f : facts) {
      labels.push_back(fscore::record::format_fact(f.fact));
      lab.post("/mark?label=" + query_escape(labels.back()));
      using fscore::record::FactKind;
      // As the oracle names the path of a violation.
      const std::string path = f.fact.kind == FactKind::entry
                                   ? (f.fact.path == "." ? f.fact.second : f.fact.path + "/" + f.fact.second)
                               : f.fact.kind == FactKind::rename ? f.fact.path + " | " + f.fact.second
                                                                 : f.fact.path;
      if (f.rule.empty()) continue;
      // By the path and what the violation will call it, and by the path alone.
      static const std::map<FactKind, const char*> kWhat{
          {FactKind::file, "file"},     {FactKind::prefix, "prefix"}, {FactKind::entry, "present"},
          {FactKind::rename, "renamed"}, {FactKind::absent, "absent"}, {FactKind::mode, "mode"},
          {FactKind::nlink, "nlink"},   {FactKind::symlink, "symlink"}, {FactKind::xattr, "xattr"},
          {FactKind::noxattr, "xattr"}};
      if (const auto named = kWhat.find(f.fact.kind); named != kWhat.end()) rule_of[path + "\t" + named->second] = f.rule;
      rule_of[path] = f.rule;
    }
  };
  clock.lap(&o.seconds[0]);
  lab.mount();
  clock.lap(&o.seconds[1]);
  std::string error;
  try {
    for (const auto& step : w.steps) {
      script.push_back({step, {}, {}});
      post(oracle.before(step.op, live_tree(lab.mount_point())), script.back().before);
      run_step(lab.mount_point(), step);
      post(oracle.after(step, live_tree(lab.mount_point())), script.back().after);
    }
  } catch (const std::exception& e) {
    error = e.what();
  }
  clock.lap(&o.seconds[2]);
  lab.unmount();
  lab.post("/record/stop");
  clock.lap(&o.seconds[3]);
  if (!error.empty()) {
    o.error = error;
    return o;
  }

  CheckArgs check;
  check.recording = recording.string();
  check.out = dir.string();
  check.shard = "0/1";
  // ext4: the fast path, the kernel confirming the failing states; the
  // others: the kernel checks every state it takes (a budget's sample).
  check.verify = a.filesystem == "ext4" ? "failing" : "";
  check.per_signature = 1;
  check.max_states = max_states;
  check.max_states_given = true;
  check.mount_options = a.mount_options;
  check.run_folder = &folder;
  {
    OutputTo log(dir / "check.log");
    o.status = crash_check_main(check);
  }
  clock.lap(&o.seconds[4]);
  std::ifstream in(dir / "results.json");
  std::stringstream text;
  text << in.rdbuf();
  const Json results = parse_json(text.str(), (dir / "results.json").string());
  o.states = results.at("coverage").at("checked").get<std::uint64_t>();
  if (o.status == 1)
    std::ofstream(dir / "reproduce.sh") << reproducer_script(w, a.bound, a.mount_options, script);
  for (const Json& s : results.at("states")) {
    if (s.at("verdict") == "pass") continue;
    ++o.failing;
    if (o.failures.size() >= 3) continue;
    Json f{{"ordinal", s.at("ordinal")}, {"verdict", s.at("verdict")}};
    if (s.contains("violations"))
      for (Json v : s.at("violations")) {
        auto r = rule_of.find(v.at("path").get<std::string>() + "\t" + v.at("what").get<std::string>());
        if (r == rule_of.end()) r = rule_of.find(v.at("path").get<std::string>());
        if (r != rule_of.end()) {
          v["rule"] = r->second;
          v["source"] = crashlab::explore::rule(r->second).source;
        }
        f["violations"].push_back(v);
      }
    o.failures.push_back(f);
  }
  if (o.failing > 0) {
    // What the first failing states broke, and by which operations.
    std::set<std::string> broke;
    for (const Json& f : o.failures)
      if (f.contains("violations"))
        for (const Json& v : f.at("violations"))
          broke.insert((v.contains("rule") ? words(v.at("rule")) : std::string("no rule")) + ": " + words(v.at("what")) +
                       " " + words(v.at("how")));
      else
        broke.insert(words(f.at("verdict")));
    for (const std::string& b : broke) o.signature += (o.signature.empty() ? "" : ", ") + b;
    std::string ops;
    for (const auto& s : w.steps)
      if (!s.setup) ops += (ops.empty() ? "" : " + ") + std::string(to_string(s.op.kind));
    o.signature += " | " + ops;
  }
  return o;
}

// What a signature says broke ("sync: present missing"), without the operations.
std::set<std::string> what_broke(const std::string& signature) {
  std::set<std::string> out;
  std::stringstream in(signature.substr(0, signature.rfind(" | ")));
  for (std::string item; std::getline(in, item, ',');) out.insert(item.substr(item.find_first_not_of(' ')));
  return out;
}

// Whether two failures break something the same way (the same rule, what and how).
bool fails_alike(const std::string& a, const std::string& b) {
  const std::set<std::string> x = what_broke(a), y = what_broke(b);
  return std::any_of(x.begin(), x.end(), [&](const std::string& item) { return item != "unreadable" && y.count(item) != 0; });
}

// The fewest core steps of a failing workload that still fail the same way
// (one of the same rules broken the same way, what and how): delta debugging one step
// at a time, which for three steps at most is its whole search; each try
// with the setup its steps need, run and checked as any workload, in
// DIR/try-K. The last step keeps a persistence call.
struct Minimal {
  Workload workload;  // the workload itself when no step can go
  Outcome outcome;
  fs::path dir;  // the try that found it; empty: the workload itself
};
Minimal minimize(Testbed& lab, const Workload& w, const Outcome& failed, const fs::path& dir, const ExploreArgs& a,
                 std::uint64_t max_states, const RunFolder& folder) {
  using crashlab::explore::Step;
  std::vector<Step> core;
  for (const Step& s : w.steps)
    if (!s.setup) core.push_back(s);
  Minimal best{w, failed, {}};
  int tries = 0;
  for (bool smaller = true; smaller && core.size() > 1;) {
    smaller = false;
    for (std::size_t i = 0; i < core.size() && !interrupted(); ++i) {
      std::vector<Step> fewer = core;
      fewer.erase(fewer.begin() + static_cast<std::ptrdiff_t>(i));
      if (fewer.back().persist == crashlab::explore::Persist::none) continue;
      Workload t;
      t.ordinal = w.ordinal;
      for (const Step& s : fewer) {
        if (!t.name.empty()) t.name += "; ";
        t.name += describe(s.op) + (s.persist == crashlab::explore::Persist::none ? "" : " " + describe_persist(s));
      }
      t.steps = crashlab::explore::with_setup(fewer);
      const fs::path try_dir = dir / ("try-" + std::to_string(++tries));
      Outcome r = explore_one(lab, t, try_dir, a, max_states, folder);
      if (r.failing == 0 || !fails_alike(r.signature, failed.signature)) continue;
      core = fewer;
      best = {t, r, try_dir};
      smaller = true;
      break;
    }
  }
  return best;
}

}  // namespace

int crash_explore_main(const ExploreArgs& a) {
  const Generator generator(bound_of(a.bound), ops_of(a.ops));
  if (a.filesystem != "ext4" && a.filesystem != "xfs" && a.filesystem != "btrfs")
    throw UsageError("nvj crash explore: --fs " + a.filesystem + ": expected ext4, xfs or btrfs");
  const std::vector<std::string> parameters = server_parameters(a.filesystem, a.parameters);
  const std::uint64_t max_states = a.max_states_given || a.filesystem == "ext4" ? a.max_states : kKernelExploreBudget;
  std::optional<std::uint64_t> only;
  if (!a.workload.empty()) {
    std::uint64_t n = 0;
    const auto [end, ec] = std::from_chars(a.workload.data(), a.workload.data() + a.workload.size(), n);
    if (ec != std::errc() || end != a.workload.data() + a.workload.size() || n >= generator.count())
      throw UsageError("nvj crash explore: --workload " + a.workload + ": expected an ordinal from 0 to " +
                       std::to_string(generator.count() - 1) + " (" + a.bound + " has " +
                       std::to_string(generator.count()) + " workloads)");
    only = n;
  }
  const auto from_env = [](const char* name) -> std::optional<std::string> {
    const char* v = std::getenv(name);
    return v == nullptr ? std::nullopt : std::optional<std::string>(v);
  };
  const Shard shard = a.shard.empty() ? shard_from_environment(from_env) : parse_shard(a.shard);
  std::vector<std::uint64_t> mine;
  if (only)
    mine.push_back(*only);
  else
    for (std::uint64_t i = shard.index; i < generator.count(); i += shard.count) mine.push_back(i);
  if (a.list) {
    for (const std::uint64_t i : mine) std::printf("%llu\t%s\n", static_cast<unsigned long long>(i), generator.at(i).name.c_str());
    return 0;
  }
  if (a.out.empty()) throw UsageError("nvj crash explore: --out DIR is required (or --list)");
  if (::geteuid() != 0) throw std::runtime_error("nvj crash explore needs root: it attaches block devices and mounts them");
  const fs::path out = fs::absolute(a.out);
  fs::create_directories(out);
  catch_interrupts();
  RunFolder folder("explore");
  if (a.keep) folder.keep();
  if (a.filesystem != "ext4") {
    const std::string mkfs = a.filesystem == "xfs" ? "mkfs.xfs" : "mkfs.btrfs";
    if (run({"sh", "-c", "command -v " + mkfs}).status != 0)
      throw UsageError("nvj crash explore: --fs " + a.filesystem + ": this host cannot make it (" + mkfs +
                       " is not installed: Debian's " + (a.filesystem == "xfs" ? "xfsprogs" : "btrfs-progs") + ")");
  }
  TestbedOptions o{folder.path(), parameters, a.mount_options, [](const std::string& what) {
                     if (interrupted()) throw std::runtime_error("interrupted");
                     std::printf("== %s\n", what.c_str());
                     std::fflush(stdout);
                   }};
  o.filesystem = a.filesystem;
  if (a.filesystem == "btrfs") o.exports = {"data"};
  Testbed lab(std::move(o));
  lab.unmount();
  lab.post("/base/keep");
  std::printf("== exploring %zu of the %llu workloads of %s%s\n", mine.size(),
              static_cast<unsigned long long>(generator.count()), a.bound.c_str(),
              shard.count > 1 ? (" (shard " + std::to_string(shard.index) + "/" + std::to_string(shard.count) + ")").c_str() : "");
  std::fflush(stdout);
  const auto start = std::chrono::steady_clock::now();
  std::uint64_t states = 0, findings = 0, done = 0, errors = 0;
  double phases[kPhaseCount] = {};
  Json workloads = Json::array();
  int worst = 0;
  for (const std::uint64_t i : mine) {
    if (interrupted()) break;
    const Workload w = generator.at(i);
    Outcome r;
    try {
      r = explore_one(lab, w, out / "workloads" / std::to_string(i), a, max_states, folder);
    } catch (const std::exception&) {
      if (interrupted()) break;  // a step of the lab gave up on the signal
      throw;
    }
    ++done;
    for (std::size_t k = 0; k < kPhaseCount; ++k) phases[k] += r.seconds[k];
    if (!r.error.empty()) {
      ++errors;
      std::fprintf(stderr, "nvj crash explore: workload %llu (%s) could not run: %s\n",
                   static_cast<unsigned long long>(i), w.name.c_str(), r.error.c_str());
    }
    states += r.states;
    if (r.failing > 0) {
      ++findings;
      std::printf("workload %llu: %s: %llu of %llu states fail\n", static_cast<unsigned long long>(i), w.name.c_str(),
                  static_cast<unsigned long long>(r.failing), static_cast<unsigned long long>(r.states));
    }
    if (r.status > 1) worst = r.status;
    workloads.push_back(Json{{"ordinal", i},
                             {"name", w.name},
                             {"steps", crashlab::explore::describe_steps(w.steps)},
                             {"states", r.states},
                             {"failing", r.failing},
                             {"error", r.error.empty() ? Json(nullptr) : Json(r.error)},
                             {"failures", r.failures}});
    if (r.failing > 0 && !a.no_minimize && r.signature.find(" + ") != std::string::npos) {
      const fs::path dir = out / "workloads" / std::to_string(i) / "minimal";
      const Minimal m = minimize(lab, w, r, dir, a, max_states, folder);
      Json& j = workloads.back()["minimal"];
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
    if (r.failing > 0) {
      workloads.back()["signature"] = r.signature;
      workloads.back()["reproducer"] = "workloads/" + std::to_string(i) + "/reproduce.sh";  // beside explore.json
    }
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!lab.teardown()) throw std::runtime_error("taking the lab down failed (see above)");
  Json rules = Json::array();
  for (const auto& r : crashlab::explore::rules())
    rules.push_back(Json{{"id", r.id}, {"promise", r.promise}, {"source", r.source}});
  Json phase_json = Json::object();
  for (std::size_t k = 0; k < kPhaseCount; ++k) phase_json[kPhases[k]] = phases[k];
  Json ops = Json::array();
  for (const OpKind k : ops_of(a.ops)) ops.push_back(to_string(k));
  const Json report{{"bound", a.bound},
                    {"ops", ops},
                    {"filesystem", a.filesystem},
                    {"mount_options", a.mount_options},
                    {"parameters", parameters},
                    {"max_states", max_states},
                    {"workloads_in_bound", generator.count()},
                    {"shard", Json{{"index", shard.index}, {"count", shard.count}}},
                    {"explored", done},
                    {"states", states},
                    {"findings", findings},
                    {"errors", errors},
                    {"seconds", seconds},
                    {"phases", phase_json},
                    {"interrupted", interrupted()},
                    {"rules", rules},
                    {"workloads", workloads}};
  write_explore_report(report, out);
  std::printf("%llu workloads, %llu states checked in %.1f s, %llu findings\n", static_cast<unsigned long long>(done),
              static_cast<unsigned long long>(states), seconds, static_cast<unsigned long long>(findings));
  if (errors > 0) std::printf("(%llu workloads could not run: see explore.json)\n", static_cast<unsigned long long>(errors));
  if (interrupted() || errors > 0) return 1;
  if (worst > 1) return worst;
  return findings > 0 ? 1 : 0;
}

}  // namespace nvj::cli
