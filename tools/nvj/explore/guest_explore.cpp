// SPDX-License-Identifier: BSD-3-Clause
#include "tools/nvj/explore/guest_explore.h"

#include <charconv>
#include <chrono>
#include <cstdio>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string_view>

#include "common/control_client.h"
#include "common/duration.h"
#include "common/json.h"
#include "common/query_escape.h"
#include "crashlab/explore/generator.h"
#include "tools/nvj/explore/workload_run.h"
#include "tools/nvj/vm/guest_init.h"
#include "tools/nvj/vm/vm_session.h"

namespace nvj::cli {

namespace fs = std::filesystem;

namespace {

// A workload's guest time at most, beyond a boot's: TCG runs a workload in
// a second or two; the budget allows for a slow, busy machine.
constexpr std::chrono::seconds kBootBudget{180}, kPerWorkload{30};

std::uint64_t ordinal_in(std::string_view& words, const std::string& request) {
  const std::size_t space = words.find(' ');
  const std::string_view number = words.substr(0, space);
  std::uint64_t n = 0;
  const auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), n);
  if (ec != std::errc() || end != number.data() + number.size())
    throw std::runtime_error("nvj-lab " + request + ": expected a workload's ordinal");
  words = space == std::string_view::npos ? std::string_view() : words.substr(space + 1);
  return n;
}

}  // namespace

std::string guest_explore_script(const ExploreArgs& a, const crashlab::explore::OracleOptions& oracle,
                                 const std::vector<std::uint64_t>& workloads) {
  std::string steps = "nvj-workload explore-steps --bound " + shell_quote(a.bound);
  if (!a.ops.empty()) steps += " --ops " + shell_quote(a.ops);
  steps += workloads::oracle_flags(oracle) + workloads::step_flags({a.periodic_commit});
  std::string list;
  for (const std::uint64_t n : workloads) {
    if (!list.empty()) list += ' ';
    list += std::to_string(n);
  }
  return R"(# nvj crash explore --vm: every workload from the server's base, one after another.
cd / && umount /mnt || { echo "nvj crash explore: cannot unmount /mnt" >&2; exit 1; }
mount_fs() { mount -t "$NVJ_FS" ${NVJ_MOUNT_FLAGS:+-o "$NVJ_MOUNT_FLAGS"} /dev/sda /mnt; }
for n in )" + list + R"(; do
  nvj-workload explore-lab begin "$n" || exit 1
  # The base is back on the server: nothing of the last workload may stay cached.
  for d in /dev/sda /dev/sdb; do [ ! -b "$d" ] || blockdev --flushbufs "$d" || exit 1; done
  echo 3 > /proc/sys/vm/drop_caches
  mount_fs || { echo "nvj crash explore: workload $n: mount failed" >&2; exit 1; }
  (cd /mnt && )" + steps + R"( --workload "$n" --trace /tmp/trace) || exit 1
  umount /mnt || { echo "nvj crash explore: workload $n: umount failed" >&2; exit 1; }
  nvj-workload explore-lab end "$n" --trace /tmp/trace || exit 1
done
mount_fs   # /init unmounts it
)";
}

GuestExplore explore_in_guest(const GuestExploreOptions& g) {
  const ExploreArgs& a = *g.args;
  GuestExplore result;
  const std::string control = (g.run_dir / "control.sock").string();
  std::mutex mutex;
  std::set<std::uint64_t> expected(g.workloads.begin(), g.workloads.end());
  std::uint64_t recording = UINT64_MAX;  // the workload being recorded
  const auto recording_of = [&](std::uint64_t n) { return fs::absolute(g.out / "workloads" / std::to_string(n) / "recording.nvjrec"); };

  VmOptions o;
  o.parameters = g.parameters;
  o.parameters.push_back("control=" + control);
  o.filesystem = a.filesystem;
  o.mount_options = a.mount_options;
  o.resolved_kernel = g.kernel;
  o.cpus = guest_cpus(a);
  o.timeout = kBootBudget + kPerWorkload * static_cast<long>(g.workloads.size());
  const crashlab::explore::OracleOptions oracle = oracle_options(a);
  const crashlab::explore::Generator generator = explore_generator(a);
  o.command = {"sh", "-c", guest_explore_script(a, oracle, g.workloads)};
  o.before_boot = [](const std::string& c) { control_call(c, "POST", "/base/keep"); };
  o.lab = [&](std::string_view words) {
    std::lock_guard lock(mutex);
    const std::size_t space = words.find(' ');
    const std::string request(words.substr(0, space));
    words = space == std::string_view::npos ? std::string_view() : words.substr(space + 1);
    const std::uint64_t n = ordinal_in(words, request);
    if (expected.count(n) == 0) throw std::runtime_error("nvj-lab " + request + " " + std::to_string(n) + ": not a workload of this run");
    if (request == "begin") {
      if (recording != UINT64_MAX) throw std::runtime_error("nvj-lab begin: workload " + std::to_string(recording) + " has not ended");
      const fs::path file = recording_of(n);
      fs::create_directories(file.parent_path());
      fs::remove(file);
      control_call(control, "POST", "/base/restore");
      control_call(control, "POST", "/record/start?file=" + query_escape(file.string()));
      recording = n;
      return;
    }
    if (request != "end") throw std::runtime_error("nvj-lab " + request + ": expected begin or end");
    if (recording != n) throw std::runtime_error("nvj-lab end " + std::to_string(n) + ": it did not begin");
    control_call(control, "POST", "/record/stop");
    recording = UINT64_MAX;
    const Json trace = parse_json(query_unescape(words), "the trace of workload " + std::to_string(n));
    result.traces[n] = workloads::trace_from_json(trace, generator.at(n));
  };
  const auto start = std::chrono::steady_clock::now();
  result.status = run_vm(o);
  result.seconds = seconds_since(start);
  return result;
}

}  // namespace nvj::cli
