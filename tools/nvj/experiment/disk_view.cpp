// SPDX-License-Identifier: BSD-3-Clause
#include "tools/nvj/experiment/disk_view.h"

#include <chrono>

#include "common/duration.h"
#include "tools/nvj/experiment/report.h"
#include "tools/nvj/host/processes/process.h"

namespace nvj::cli {

TestbedOptions one_disk(const std::filesystem::path& run_dir, const std::string& size, const std::string& filesystem) {
  TestbedOptions o{run_dir, {"data=" + size, "data-model=hdd:cache=off"}, "", {}};
  o.filesystem = filesystem;
  if (filesystem == "ext4") {
    o.parameters.push_back("fs-journal=internal");
  } else {
    o.parameters.push_back("fs=none");
    o.exports = {"data"};  // XFS's log inside, like ext4's journal
  }
  return o;
}

DiskCounts disk_counts(const Testbed& lab) {
  const std::string text = lab.get("/stats");
  const JsonFigures s(text, "GET /stats");
  DiskCounts d;
  d.reads = s.count("exports.data.ops.read.count");
  d.read_bytes = s.count("exports.data.ops.read.bytes");
  d.writes = s.count("exports.data.ops.write.count");
  d.write_bytes = s.count("exports.data.ops.write.bytes");
  d.sequential = s.number("exports.data.sequential_fraction");
  d.seeks = s.count("exports.data.seeks.count");
  d.seek_cylinders = s.count("exports.data.seeks.cylinders");
  for (const char* part : {"seek", "rotation", "transfer"})
    d.device_ms += s.number(std::string("exports.data.device_time_us.") + part) / 1000;
  d.device_ms += s.number("exports.data.destaged_writes_us") / 1000;
  const Json doc = parse_json(text, "GET /stats");
  for (const auto& [bound, count] : doc.at("exports").at("data").at("seeks").at("distance").items())
    d.seek_distance[std::stoull(bound)] = count.get<std::uint64_t>();
  return d;
}

Json seek_distance_json(const std::map<std::uint64_t, std::uint64_t>& distance) {
  Json out = Json::object();
  for (const auto& [bound, count] : distance) out[std::to_string(bound)] = count;
  return out;
}

void cold_cache(Testbed& lab) {
  lab.unmount();
  run_checked({"sh", "-c", "sync && echo 3 >/proc/sys/vm/drop_caches"});
  run_checked({"blockdev", "--flushbufs", lab.data_device()});
  lab.mount();
}

double timed(const std::vector<std::string>& argv) {
  const auto start = std::chrono::steady_clock::now();
  run_checked(argv);
  return seconds_since(start);
}

}  // namespace nvj::cli
