// SPDX-License-Identifier: BSD-3-Clause
#include "tools/nvj/explore/explore_report.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>

#include "common/command_line.h"
#include "tools/nvj/experiment/report.h"
#include "tools/nvj/vm/guest_kernel.h"

namespace nvj::cli {

namespace fs = std::filesystem;

namespace {

fs::path explore_file(const std::string& input) {
  return fs::is_directory(input) ? fs::path(input) / "explore.json" : fs::path(input);
}

Json read_explore(const std::string& input) {
  const fs::path file = explore_file(input);
  std::ifstream in(file);
  if (!in) throw UsageError("nvj crash merge: cannot read " + file.string());
  std::stringstream text;
  text << in.rdbuf();
  return parse_json(text.str(), file.string());
}


}  // namespace

void write_explore_report(const Json& report, const fs::path& out) {
  std::ofstream(out / "explore.json") << to_json_text(report) << "\n";
  std::map<std::string, std::vector<const Json*>> groups;
  std::vector<const Json*> oracle_errors;
  for (const Json& w : report.at("workloads"))
    if (!w.at("oracle_error").is_null()) oracle_errors.push_back(&w);
    else if (w.at("failing").get<std::uint64_t>() > 0) groups[w.at("signature").get<std::string>()].push_back(&w);
  std::ostringstream md;
  md << "# nvj crash explore: " << report.at("bound").get<std::string>() << " on "
     << report.at("filesystem").get<std::string>()
     << (report.at("mount_options").get<std::string>().empty() ? std::string()
                                                                : " (" + report.at("mount_options").get<std::string>() + ")")
     << ", promises " << report.at("promises").get<std::string>() << "\n\n"
     << report.at("explored").get<std::uint64_t>() << " workloads of " << report.at("workloads_in_bound").get<std::uint64_t>()
     << " explored, " << report.at("states").get<std::uint64_t>() << " crash states checked, "
     << report.at("findings").get<std::uint64_t>() << " workloads with failing states in " << groups.size()
     << " signatures" << (report.at("errors").get<std::uint64_t>() > 0 ? ", " + std::to_string(report.at("errors").get<std::uint64_t>()) + " workloads could not run" : std::string())
     << ".\n\n";
  if (!oracle_errors.empty()) {
    md << "**" << oracle_errors.size()
       << " workloads break a fact in their own final state (every write kept): the oracle's errors, not findings.**\n\n";
    for (const Json* w : oracle_errors)
      md << "- " << w->at("ordinal").get<std::uint64_t>() << " (" << w->at("steps").get<std::string>()
         << "): " << w->at("oracle_error").get<std::string>() << "\n";
    md << "\n";
  }
  if (!groups.empty()) {
    md << "| signature | workloads | the first | its failing states | reproducer |\n|---|---|---|---|---|\n";
    for (const auto& [signature, list] : groups) {
      const Json& first = *list.front();
      md << "| " << markdown_cell(signature) << " | " << list.size() << " | " << first.at("ordinal").get<std::uint64_t>() << ": `"
         << markdown_cell(first.at("name").get<std::string>()) << "` | " << first.at("failing").get<std::uint64_t>() << " of "
         << first.at("states").get<std::uint64_t>() << " | " << first.value("reproducer", std::string()) << " |\n";
    }
    md << "\nThe first workload of each signature, the facts its first failing states broke:\n\n";
    for (const auto& [signature, list] : groups) {
      const Json& first = *list.front();
      md << "- " << first.at("ordinal").get<std::uint64_t>() << " (" << first.at("steps").get<std::string>() << "):\n";
      for (const Json& f : first.at("failures")) {
        md << "  - state " << f.at("ordinal").get<std::uint64_t>() << ", " << f.at("verdict").get<std::string>();
        if (f.contains("violations"))
          for (const Json& v : f.at("violations"))
            md << "; " << v.at("path").get<std::string>() << ": " << v.at("what").get<std::string>() << " "
               << v.at("how").get<std::string>()
               << (v.contains("rule") ? " (rule " + v.at("rule").get<std::string>() + ", " +
                                            v.at("level").get<std::string>() + ": " + v.at("source").get<std::string>() + ")"
                                      : std::string());
        md << "\n";
      }
    }
  }
  md << "\nThe rules (docs/explore-rules.md):\n\n| rule | level | source |\n|---|---|---|\n";
  for (const Json& r : report.at("rules"))
    md << "| " << r.at("id").get<std::string>() << " | " << r.at("level").get<std::string>() << " | "
       << markdown_cell(r.at("source").get<std::string>()) << " |\n";
  std::ofstream(out / "findings.md") << md.str();
}

void write_kernel_table(const Json& table, const fs::path& out) {
  std::ofstream(out / "kernels.json") << to_json_text(table) << "\n";
  const Json& kernels = table.at("kernels");
  const auto verdict = [&](const Json& k, const std::string& n) -> std::string {
    const Json& f = k.at("failing");
    if (!f.contains(n)) return "not run";
    if (f.at(n).is_null()) return "could not run";
    const auto count = f.at(n).get<std::uint64_t>();
    return count == 0 ? "pass" : std::to_string(count) + " states fail";
  };
  std::vector<std::string> differ, everywhere;
  for (const auto& [n, name] : table.at("workloads").items()) {
    std::set<std::string> verdicts;
    bool fails = false;
    for (const Json& k : kernels) {
      const std::string v = verdict(k, n);
      verdicts.insert(v == "pass" || v == "not run" || v == "could not run" ? v : "fail");
      fails = fails || (v != "pass" && v != "not run");
    }
    if (verdicts.size() > 1)
      differ.push_back(n);
    else if (fails)
      everywhere.push_back(n);
  }
  const auto by_number = [](const std::string& x, const std::string& y) { return std::stoull(x) < std::stoull(y); };
  std::sort(differ.begin(), differ.end(), by_number);
  std::sort(everywhere.begin(), everywhere.end(), by_number);
  std::ostringstream md;
  md << "# nvj crash explore --vm: " << table.at("bound").get<std::string>() << " on "
     << table.at("filesystem").get<std::string>()
     << (table.at("mount_options").get<std::string>().empty() ? std::string()
                                                               : " (" + table.at("mount_options").get<std::string>() + ")")
     << ", by kernel\n\nEach guest booted with " << table.at("guest_cpus").get<unsigned>() << " processor"
     << (table.at("guest_cpus").get<unsigned>() == 1 ? "" : "s") << ".\n\n| | ";
  std::string rule = "|---|";
  for (const Json& k : kernels) {
    md << k.at("version").get<std::string>() << " | ";
    rule += "---|";
  }
  md << "\n" << rule << "\n";
  const auto row = [&](const std::string& label, const std::function<std::string(const Json&)>& value) {
    md << "| " << label << " | ";
    for (const Json& k : kernels) md << value(k) << " | ";
    md << "\n";
  };
  // Which kernel each column is: the name it was given, the package its
  // image came from, the image's checksum (kernels.json has them whole).
  row("kernel", [](const Json& k) { return kernel_label(k); });
  row("workloads explored", [](const Json& k) { return std::to_string(k.at("explored").get<std::uint64_t>()); });
  row("crash states checked", [](const Json& k) { return std::to_string(k.at("states").get<std::uint64_t>()); });
  row("workloads with failing states", [](const Json& k) { return std::to_string(k.at("findings").get<std::uint64_t>()); });
  row("workloads that could not run", [](const Json& k) { return std::to_string(k.at("errors").get<std::uint64_t>()); });
  row("oracle errors (no findings)", [](const Json& k) { return std::to_string(k.at("oracle_errors").get<std::uint64_t>()); });
  row("seconds", [](const Json& k) {
    char b[32];
    std::snprintf(b, sizeof b, "%.1f", k.at("seconds").get<double>());
    return std::string(b);
  });
  for (const auto* list : {&differ, &everywhere}) {
    md << "\n## " << (list == &differ ? "Workloads whose verdict differs between kernels" : "Workloads failing on every kernel")
       << " (" << list->size() << ")\n\n";
    if (list->empty()) continue;
    md << "| workload | ";
    for (const Json& k : kernels) md << k.at("version").get<std::string>() << " | ";
    md << "\n" << rule << "\n";
    for (const std::string& n : *list) {
      md << "| " << n << ": `" << markdown_cell(table.at("workloads").at(n).get<std::string>()) << "` | ";
      for (const Json& k : kernels) {
        const std::string v = verdict(k, n);
        md << v;
        if (v != "pass" && v != "not run" && v != "could not run")
          md << " ([reproducer](" << k.at("version").get<std::string>() << "/workloads/" << n << "/reproduce.sh))";
        md << " | ";
      }
      md << "\n";
    }
  }
  std::ofstream(out / "kernels.md") << md.str();
}

bool is_explore_output(const std::string& input) { return fs::exists(explore_file(input)) && explore_file(input).filename() == "explore.json"; }

namespace {

// A shard's --during-recovery: the states recovered per workload, null
// where it recovered none.
Json recovery_per_workload(const Json& shard) {
  const Json r = shard.value("during_recovery", Json(nullptr));
  return r.is_null() ? r : r.at("per_workload");
}

// The shards (read from `inputs`) are every shard of one exploration, each
// once, explored alike: a UsageError naming the first that is not.
void check_shards(const std::vector<Json>& shards, const std::vector<std::string>& inputs) {
  const Json& first = shards.front();
  const std::uint64_t count = first.at("shard").at("count").get<std::uint64_t>();
  std::vector<bool> seen(count, false);
  for (std::size_t i = 0; i < shards.size(); ++i) {
    const Json& s = shards[i];
    for (const char* key : {"bound", "ops", "filesystem", "mount_options", "promises", "parameters", "max_states", "structure",
                            "workloads_in_bound", "rules"})
      if (s.at(key) != first.at(key))
        throw UsageError("nvj crash merge: " + inputs[i] + " explored with another " + key + " than " + inputs[0]);
    if (s.value("periodic_commit", false) != first.value("periodic_commit", false))
      throw UsageError("nvj crash merge: " + inputs[i] + " explored with another periodic_commit than " + inputs[0]);
    if (s.value("sample", Json(nullptr)) != first.value("sample", Json(nullptr)))
      throw UsageError("nvj crash merge: " + inputs[i] + " explored another sample than " + inputs[0]);
    if (recovery_per_workload(s) != recovery_per_workload(first))
      throw UsageError("nvj crash merge: " + inputs[i] + " recovered states again (--during-recovery) otherwise than " +
                       inputs[0]);
    if (s.at("shard").at("count").get<std::uint64_t>() != count)
      throw UsageError("nvj crash merge: " + inputs[i] + " is a shard of " + std::to_string(s.at("shard").at("count").get<std::uint64_t>()) +
                       ", " + inputs[0] + " of " + std::to_string(count));
    const std::uint64_t index = s.at("shard").at("index").get<std::uint64_t>();
    if (index >= count)
      throw UsageError("nvj crash merge: " + inputs[i] + " calls itself shard " + std::to_string(index) + " of " +
                       std::to_string(count) + ": no such shard");
    if (seen[index]) throw UsageError("nvj crash merge: shard " + std::to_string(index) + " is given twice");
    seen[index] = true;
  }
  for (std::uint64_t i = 0; i < count; ++i)
    if (!seen[i]) throw UsageError("nvj crash merge: shard " + std::to_string(i) + " of " + std::to_string(count) + " is missing");
}

}  // namespace

int explore_merge_main(const std::vector<std::string>& inputs, const std::string& out_text) {
  std::vector<Json> shards;
  for (const std::string& input : inputs) shards.push_back(read_explore(input));
  check_shards(shards, inputs);
  const Json& first = shards.front();
  const fs::path out = fs::absolute(out_text);
  fs::create_directories(out / "workloads");
  Json merged = first;
  merged["shard"] = Json{{"index", 0}, {"count", 1}};
  std::vector<Json> workloads;
  std::uint64_t explored = 0, states = 0, findings = 0, errors = 0, oracle_errors = 0;
  double slowest = 0;
  bool interrupted = false;
  for (std::size_t i = 0; i < shards.size(); ++i) {
    const Json& s = shards[i];
    explored += s.at("explored").get<std::uint64_t>();
    states += s.at("states").get<std::uint64_t>();
    findings += s.at("findings").get<std::uint64_t>();
    errors += s.at("errors").get<std::uint64_t>();
    oracle_errors += s.at("oracle_errors").get<std::uint64_t>();
    slowest = std::max(slowest, s.at("seconds").get<double>());
    interrupted = interrupted || s.at("interrupted").get<bool>();
    const fs::path from = explore_file(inputs[i]).parent_path() / "workloads";
    for (const Json& w : s.at("workloads")) {
      workloads.push_back(w);
      const std::string n = std::to_string(w.at("ordinal").get<std::uint64_t>());
      if (fs::exists(from / n) && fs::absolute(from / n) != out / "workloads" / n)
        fs::copy(from / n, out / "workloads" / n, fs::copy_options::recursive | fs::copy_options::overwrite_existing);
    }
  }
  std::sort(workloads.begin(), workloads.end(),
            [](const Json& a, const Json& b) { return a.at("ordinal").get<std::uint64_t>() < b.at("ordinal").get<std::uint64_t>(); });
  for (std::size_t i = 1; i < workloads.size(); ++i)
    if (workloads[i].at("ordinal") == workloads[i - 1].at("ordinal"))
      throw UsageError("nvj crash merge: workload " + to_json_text(workloads[i].at("ordinal")) + " was explored twice");
  merged["workloads"] = workloads;
  merged["explored"] = explored;
  merged["states"] = states;
  merged["findings"] = findings;
  merged["errors"] = errors;
  merged["oracle_errors"] = oracle_errors;
  merged["seconds"] = slowest;
  Json phases = Json::object();  // summed over the shards: CPU and waits, not the wall
  for (const Json& s : shards)
    for (const auto& [phase, t] : s.at("phases").items()) phases[phase] = phases.value(phase, 0.0) + t.get<double>();
  merged["phases"] = phases;
  merged["interrupted"] = interrupted;
  if (!first.value("during_recovery", Json(nullptr)).is_null())
    for (const char* key : {"recovered", "checked", "failing"}) {
      std::uint64_t sum = 0;
      for (const Json& s : shards) sum += s.at("during_recovery").at(key).get<std::uint64_t>();
      merged["during_recovery"][key] = sum;
    }
  write_explore_report(merged, out);
  std::printf("merged %zu shards of an exploration into %s\n", shards.size(), (out / "explore.json").c_str());
  std::printf("%llu workloads, %llu states checked in %.1f s, %llu findings\n", static_cast<unsigned long long>(explored),
              static_cast<unsigned long long>(states), slowest, static_cast<unsigned long long>(findings));
  const Json recovery = merged.value("during_recovery", Json(nullptr));
  if (!recovery.is_null() && recovery.at("recovered").get<std::uint64_t>() > 0)
    std::printf("(during recovery: %llu states recovered, %llu crash states of their recoveries checked, %llu failing)\n",
                static_cast<unsigned long long>(recovery.at("recovered").get<std::uint64_t>()),
                static_cast<unsigned long long>(recovery.at("checked").get<std::uint64_t>()),
                static_cast<unsigned long long>(recovery.at("failing").get<std::uint64_t>()));
  return interrupted || errors > 0 || oracle_errors > 0 || findings > 0 ? 1 : 0;
}

}  // namespace nvj::cli
