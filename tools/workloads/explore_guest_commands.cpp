// SPDX-License-Identifier: BSD-3-Clause
#include "tools/workloads/explore_guest_commands.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/json.h"
#include "common/mark_client.h"
#include "common/query_escape.h"
#include "crashlab/explore/generator.h"
#include "tools/workloads/explore_steps.h"

namespace nvj::workloads {

using cli::Command;
using cli::CommandRun;
using cli::UsageError;

namespace {

struct StepsArgs {
  std::string bound = "seq-1", ops, trace;
  std::uint64_t workload = 0;
  bool workload_given = false;
  bool auto_da_alloc = false;
  bool no_stale_data_rule = false;
  bool promises_tested = false;
  bool periodic_commit = false;
};

struct LabArgs {
  std::string what, trace;
  std::uint64_t workload = 0;
  bool workload_given = false;
};

std::string control_from_environment(const char* command) {
  const char* env = std::getenv("NVJ_CONTROL");
  if (env == nullptr || *env == '\0')
    throw UsageError(std::string("nvj-workload ") + command + ": NVJ_CONTROL names no server (it runs in nvj vm's guest)");
  return env;
}

crashlab::explore::Generator generator_of(const StepsArgs& a) {
  try {
    return crashlab::explore::generator_named(a.bound, crashlab::explore::op_kinds_named(a.ops));
  } catch (const std::invalid_argument& e) {
    throw UsageError(std::string("nvj-workload explore-steps: ") + e.what());
  }
}

int steps_main(const StepsArgs& a) {
  if (!a.workload_given || a.trace.empty())
    throw UsageError("nvj-workload explore-steps: --workload N and --trace FILE are required");
  const crashlab::explore::Generator generator = generator_of(a);
  if (a.workload >= generator.count())
    throw UsageError("nvj-workload explore-steps: --workload " + std::to_string(a.workload) + ": " + a.bound +
                     " has " + std::to_string(generator.count()) + " workloads");
  const std::string control = control_from_environment("explore-steps");
  const ExploreTrace trace = run_workload_steps(std::filesystem::current_path(), generator.at(a.workload),
                                                {a.auto_da_alloc, !a.no_stale_data_rule, a.promises_tested},
                                                [&](const std::string& label) { post_mark(control, label); },
                                                {a.periodic_commit});
  std::ofstream out(a.trace, std::ios::trunc);
  out << to_json_text(trace_to_json(trace)) << "\n";
  if (!out.flush()) throw std::runtime_error("cannot write " + a.trace);
  if (!trace.error.empty()) std::fprintf(stderr, "nvj-workload explore-steps: %s\n", trace.error.c_str());
  return 0;  // a step that failed is in the trace, for the host to report
}

int lab_main(const LabArgs& a) {
  if (a.what.empty() || !a.workload_given) throw UsageError("nvj-workload explore-lab: expected begin|end N");
  const std::string control = control_from_environment("explore-lab");
  std::string words = a.what + " " + std::to_string(a.workload);
  if (a.what == "end") {
    if (a.trace.empty()) throw UsageError("nvj-workload explore-lab end: --trace FILE is required");
    std::ifstream in(a.trace);
    std::stringstream text;
    text << in.rdbuf();
    if (!in) throw std::runtime_error("cannot read " + a.trace);
    std::string json = text.str();
    while (!json.empty() && json.back() == '\n') json.pop_back();
    words += " " + query_escape(json);
  }
  serial_lab_request(control, words);
  return 0;
}

}  // namespace

void add_guest_explore_commands(cli::CommandLine& program) {
  program.add("explore-steps", "run one of nvj crash explore's workloads here, its facts posted", [](Command& app) -> CommandRun {
    auto a = std::make_shared<StepsArgs>();
    app.describe("Runs workload N of the bound in the current directory, as nvj crash explore does on the host,\n"
                 "its oracle's facts posted through NVJ_CONTROL, and writes what it did to the trace FILE.\n");
    app.add("--bound", a->bound, "seq-1 (default), seq-2 or seq-3").value_name("BOUND");
    app.add("--ops", a->ops, "the operations drawn from, comma-separated (default: all)").value_name("LIST");
    app.count("--workload", a->workload, 0, UINT64_MAX, "the workload's ordinal").on_given([a] { a->workload_given = true; });
    app.flag("--auto-da-alloc", a->auto_da_alloc, "ext4's replace-by-rename rule holds (its mount options)");
    app.flag("--no-stale-data-rule", a->no_stale_data_rule,
             "post no nostale facts (ext4's data=writeback, which may show old data after a crash)");
    app.flag("--promises-tested", a->promises_tested, "the rules of the level tested too (nvj crash explore --promises)");
    app.flag("--periodic-commit", a->periodic_commit,
             "after each core operation, every file written back (no flush) and 2 s for the periodic commit "
             "(nvj crash explore --periodic-commit)");
    app.add("--trace", a->trace, "where the trace goes").value_name("FILE");
    return [a] { return steps_main(*a); };
  });
  program.add("explore-lab", "ask nvj crash explore --vm's host to begin or end a workload", [](Command& app) -> CommandRun {
    auto a = std::make_shared<LabArgs>();
    app.describe("begin N: the host restores the server's base and records workload N; end N --trace FILE: it\n"
                 "stops the recording and takes the trace (over the serial line NVJ_CONTROL names).\n");
    app.choice("WHAT", a->what, {"begin", "end"}, "begin or end");
    app.count("N", a->workload, 0, UINT64_MAX, "the workload's ordinal").on_given([a] { a->workload_given = true; });
    app.add("--trace", a->trace, "end: the trace explore-steps wrote").value_name("FILE");
    return [a] { return lab_main(*a); };
  });
}

}  // namespace nvj::workloads
