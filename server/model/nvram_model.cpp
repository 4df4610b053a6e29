// SPDX-License-Identifier: BSD-3-Clause
#include "server/model/nvram_model.h"

#include <algorithm>

#include "common/size.h"

namespace nvj {

NvramModel::Params NvramModel::parse(const ModelSpec& spec) {
  ModelParams in(spec);
  Params p;
  const Nanos both = in.duration("latency", -1);
  if (both >= 0) p.read_latency = p.write_latency = both;
  p.read_latency = in.duration("read-latency", p.read_latency);
  p.write_latency = in.duration("write-latency", p.write_latency);
  p.bandwidth = in.size("bandwidth", p.bandwidth);
  p.channels = in.count("channels", p.channels, 1, 1024);
  p.atomic = in.atomic_unit(p.atomic);
  in.finish();
  return p;
}

NvramModel::NvramModel(Params params) : p_(params), channel_free_(params.channels, 0) {}

IoTiming NvramModel::submit(const IoRequest& r, Nanos now) {
  IoTiming t;
  if (r.op == IoOp::flush) {  // everything acknowledged is durable already
    t.done = now;
    return t;
  }
  auto channel = std::min_element(channel_free_.begin(), channel_free_.end());
  const Nanos start = std::max(now, *channel);
  const bool moves_data = r.op == IoOp::read || r.op == IoOp::write;
  const Nanos link_start = std::max(start, link_free_);
  t.transfer = moves_data ? transfer_time(r.length, p_.bandwidth) : 0;
  if (moves_data) link_free_ = link_start + t.transfer;
  const Nanos latency = r.op == IoOp::read ? p_.read_latency : p_.write_latency;
  t.done = (moves_data ? link_free_ : start) + latency;
  t.queued = (moves_data ? link_start : start) - now;
  *channel = t.done;
  return t;
}

std::string NvramModel::describe() const {
  return "nvram: write " + format_duration(p_.write_latency) + ", read " + format_duration(p_.read_latency) + ", " +
         (p_.bandwidth == 0 ? std::string("unlimited bandwidth") : format_size(p_.bandwidth) + "/s") + ", " +
         std::to_string(p_.channels) + " channels";
}

}  // namespace nvj
