// SPDX-License-Identifier: BSD-3-Clause
#include "tools/nvj/crash/recovery_check.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <stdexcept>
#include <string>

#include "common/query_escape.h"
#include "tools/nvj/crash/ground_truth.h"
#include "tools/nvj/crash/lab_parameters.h"
#include "tools/nvj/host/fs_tools/filesystem_tools.h"
#include "tools/nvj/host/files/output_to_file.h"
#include "tools/nvj/host/files/text_file.h"
#include "tools/nvj/host/processes/interrupt.h"
#include "tools/nvj/testbed/testbed.h"

namespace nvj::cli {
namespace fs = std::filesystem;

std::vector<std::uint64_t> recovery_picks(const std::vector<StateRecord>& states, std::uint64_t count) {
  std::vector<std::uint64_t> passing;
  for (const StateRecord& s : states)
    if (s.verdict == crashlab::Verdict::pass && !s.failing()) passing.push_back(s.ordinal);
  std::sort(passing.begin(), passing.end());
  if (count == 0 || count >= passing.size()) return passing;
  // Evenly spread: the k-th of `count` at k * n / count, the first and the
  // last among them when count > 1.
  std::vector<std::uint64_t> picked;
  const std::uint64_t n = passing.size();
  for (std::uint64_t k = 0; k < count; ++k)
    picked.push_back(passing[count == 1 ? 0 : k * (n - 1) / (count - 1)]);
  return picked;
}

namespace {

// One state's exports written to DIR/NAME.img, and the labels of the marks
// at or before its crash point, in order.
struct StateImages {
  std::vector<std::string> exports;  // their names
  std::vector<std::string> labels;
  std::size_t point = 0;
};

constexpr std::size_t kRecoveryBatch = 16;

// Every state of `ordinals`, each into OUT/N/ (made empty first), in one
// walk over the recording.
std::map<std::uint64_t, StateImages> write_images(const RecoveryContext& c, const std::vector<std::uint64_t>& ordinals) {
  std::map<std::uint64_t, StateImages> out;
  const std::set<std::uint64_t> wanted(ordinals.begin(), ordinals.end());
  c.checker.walk_states(c.checker.find(wanted), [&](crashlab::StateContext& state) {
    const fs::path dir = fs::absolute(c.out / std::to_string(state.selected.ordinal));
    fs::remove_all(dir);
    fs::create_directories(dir);
    StateImages& s = out[state.selected.ordinal];
    for (std::size_t d = 0; d < state.image.count(); ++d) {
      const std::string name = c.index.exports()[d].name;
      write_state_file(state.image, static_cast<std::uint8_t>(d), dir / (name + ".img"));
      s.exports.push_back(name);
    }
    s.point = state.state.point;
    if (state.point.last_mark != crashlab::kNoMark)
      for (std::size_t k = 0; k <= state.point.last_mark; ++k) s.labels.push_back(c.index.marks()[k].label);
  });
  return out;
}

// The server on the state's images (the lab's device models, the images'
// own sizes), recorded from before the kernel's mount: the mount recovers
// the state, the unmount writes what a clean unmount does.
void record_recovery(const RecoveryContext& c, const StateImages& s, const fs::path& dir, const fs::path& recording) {
  std::vector<std::string> params;
  for (const std::string& p : default_parameters(c.filesystem))
    if (p.rfind("data=", 0) != 0 && p.rfind("journal=", 0) != 0 && p.rfind("fs=", 0) != 0) params.push_back(p);
  params.push_back("fs=none");  // served as they are
  for (const std::string& name : s.exports) params.push_back(name + "-file=" + fs::absolute(dir / (name + ".img")).string());
  // Named by this process too: the explorer's checks run side by side in
  // one run folder (tools/nvj/explore/check_pool.h).
  TestbedOptions o{c.run_dir / ("recovery-" + std::to_string(::getpid()) + "-" + dir.filename().string()), params,
                   copy_mount_options(c.filesystem, c.args.mount_options),
                   [](const std::string&) {
                     if (interrupted()) throw std::runtime_error("interrupted");
                   }};
  o.filesystem = c.filesystem;
  o.make_filesystem = false;
  o.exports = s.exports;
  o.before_mount = [&](const Testbed& lab) {
    lab.post("/record/start?file=" + query_escape(recording.string()));
    for (const std::string& label : s.labels) lab.post("/mark?label=" + query_escape(label));
  };
  Testbed lab(std::move(o));
  lab.unmount();
  lab.post("/record/stop");
  if (!lab.teardown()) throw std::runtime_error("taking the recovery's server down failed (see above)");
}

Json recover_one(const RecoveryContext& c, std::uint64_t ordinal, const StateImages& s) {
  const fs::path dir = fs::absolute(c.out / std::to_string(ordinal));
  Json entry{{"ordinal", ordinal}, {"point", s.point}, {"marks", s.labels.size()}};
  const fs::path recording = dir / "recovery.nvjrec";
  try {
    record_recovery(c, s, dir, recording);
  } catch (const std::exception& e) {
    if (interrupted()) throw;
    entry["error"] = std::string("recovering it: ") + e.what();
    return entry;
  }
  for (const std::string& name : s.exports) fs::remove(dir / (name + ".img"));  // the recording holds them
  CheckArgs check = c.args;
  check.recording = recording.string();
  check.out = dir.string();
  check.shard = "0/1";
  check.during_recovery_given = false;
  // No crash points at the marks: posted one after another before the
  // mount, each would be a point where only the facts said so far hold.
  // Every crash point of the recovery comes after the last of them.
  check.no_marks = true;
  // A crash point after every write besides the persistence points: a
  // recovery is a few dozen writes, and a cut between any two is one the
  // devices allow (at a flush's completion alone few writes are volatile).
  check.every = 1;
  check.made_by = nullptr;
  int status = 0;
  {
    OutputToFile log(dir / "check.log");
    status = crash_check_main(check);
  }
  const fs::path results = dir / "results.json";
  const Json r = parse_json(read_text_file(results), results.string());
  const Json& v = r.at("verdicts");
  entry["recording"] = fs::relative(recording, c.out.parent_path()).string();
  entry["crash_points"] = r.at("coverage").at("points").at("total");
  for (const char* key : {"checked", "failing", "ground_truth", "ground_truth_failing", "disagree"}) entry[key] = v.at(key);
  entry["final_state"] = r.at("final_state").at("verdict");
  entry["status"] = status;
  return entry;
}

}  // namespace

Json check_during_recovery(const RecoveryContext& c, const std::vector<std::uint64_t>& ordinals) {
  Json states = Json::array();
  std::uint64_t checked = 0, failing = 0, errors = 0, disagree = 0;
  std::printf("during recovery: %zu passing states recovered again under a recording, each recovery's crash states "
              "checked against the state's facts\n",
              ordinals.size());
  std::fflush(stdout);
  // The states' images written kRecoveryBatch at a time, each batch in one
  // walk over the recording: a walk each would read it again per state, all
  // at once would hold every state's images on disk (--during-recovery 0).
  std::map<std::uint64_t, StateImages> images;
  for (std::size_t at = 0; at < ordinals.size(); ++at) {
    if (interrupted()) break;
    const std::uint64_t ordinal = ordinals[at];
    if (at % kRecoveryBatch == 0) {
      const auto first = ordinals.begin() + static_cast<std::ptrdiff_t>(at);
      const auto end = first + static_cast<std::ptrdiff_t>(std::min(kRecoveryBatch, ordinals.size() - at));
      images = write_images(c, {first, end});
    }
    Json e = recover_one(c, ordinal, images.at(ordinal));
    if (e.contains("error")) {
      ++errors;
      std::printf("  state %llu: %s\n", static_cast<unsigned long long>(ordinal), e["error"].get<std::string>().c_str());
    } else {
      checked += e["checked"].get<std::uint64_t>();
      failing += e["failing"].get<std::uint64_t>();
      disagree += e["disagree"].get<std::uint64_t>();
      std::printf("  state %llu (point %llu): %llu crash points in its recovery, %llu states checked, %llu failing%s\n",
                  static_cast<unsigned long long>(ordinal), static_cast<unsigned long long>(e["point"].get<std::uint64_t>()),
                  static_cast<unsigned long long>(e["crash_points"].get<std::uint64_t>()),
                  static_cast<unsigned long long>(e["checked"].get<std::uint64_t>()),
                  static_cast<unsigned long long>(e["failing"].get<std::uint64_t>()),
                  e["final_state"] == "pass" ? "" : ", its recovery's final state does not pass");
    }
    std::fflush(stdout);
    states.push_back(std::move(e));
  }
  std::printf("during recovery: %zu states recovered, %llu crash states of their recoveries checked, %llu failing%s\n",
              states.size(), static_cast<unsigned long long>(checked), static_cast<unsigned long long>(failing),
              errors == 0 ? "" : (", " + std::to_string(errors) + " not recovered").c_str());
  return Json{{"recovered", states.size()}, {"checked", checked},   {"failing", failing},
              {"disagree", disagree},       {"errors", errors},      {"states", std::move(states)}};
}

}  // namespace nvj::cli
