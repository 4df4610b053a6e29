// SPDX-License-Identifier: BSD-3-Clause
#include "server/model/ssd_model.h"

#include <algorithm>

#include "common/size.h"

namespace nvj {

SsdModel::Params SsdModel::parse(const ModelSpec& spec) {
  ModelParams in(spec);
  Params p;
  p.read_latency = in.duration("read-latency", p.read_latency);
  p.write_latency = in.duration("write-latency", p.write_latency);
  p.program_latency = in.duration("program-latency", p.program_latency);
  p.page = in.size("page", p.page);
  p.channels = in.count("channels", p.channels, 1, 1024);
  p.bandwidth = in.size("bandwidth", p.bandwidth);
  p.cache = in.on_off("cache", p.cache);
  p.cache_size = in.size("cache-size", p.cache_size);
  p.atomic = in.atomic_unit(p.atomic);
  in.finish();
  if (p.page == 0) throw std::invalid_argument("ssd: page must be above 0");
  if (p.cache && p.cache_size == 0) throw std::invalid_argument("ssd: cache-size must be above 0 with cache=on");
  return p;
}

SsdModel::SsdModel(Params params) : p_(params), channel_free_(params.channels, 0) {}

Nanos SsdModel::program(std::uint64_t bytes, Nanos start) const {
  const std::uint64_t pages = (bytes + p_.page - 1) / p_.page;
  const std::uint64_t rounds = (pages + p_.channels - 1) / p_.channels;
  return start + static_cast<Nanos>(rounds) * p_.program_latency;
}

Nanos SsdModel::link(std::uint64_t bytes, Nanos start) {
  const Nanos at = std::max(start, link_free_);
  link_free_ = at + transfer_time(bytes, p_.bandwidth);
  return link_free_;
}

// The whole cache was programmed in `time`: each tag's share is its share of
// the bytes (the pages go out together over all channels).
void SsdModel::destaged(Nanos time, IoTiming& t) {
  t.destage += time;
  const std::uint64_t total = dirty_.bytes();
  Nanos left = time;
  for (std::uint8_t tag = kIoTags - 1; tag > 0 && total > 0; --tag) {
    const auto share = static_cast<Nanos>(static_cast<double>(time) * static_cast<double>(dirty_.bytes(tag)) /
                                          static_cast<double>(total));
    t.destaged_by_tag[tag] += share;
    left -= share;
  }
  t.destaged_by_tag[0] += left;
  dirty_ = ExtentSet();
}

IoTiming SsdModel::submit(const IoRequest& r, Nanos now) {
  IoTiming t;
  switch (r.op) {
    case IoOp::flush: {
      const Nanos start = std::max(now, flash_free_);
      t.queued = start - now;
      const Nanos end = program(dirty_.bytes(), start);
      destaged(end - start, t);
      flash_free_ = end;
      t.done = end;
      return t;
    }
    case IoOp::trim:
      dirty_.erase(r.offset, r.offset + r.length);
      t.done = now + p_.write_latency;
      return t;
    case IoOp::read: {
      auto channel = std::min_element(channel_free_.begin(), channel_free_.end());
      const Nanos start = std::max({now, *channel, flash_free_});
      t.queued = start - now;
      const bool hit = dirty_.contains(r.offset, r.offset + r.length);
      const Nanos ready = start + (hit ? p_.write_latency : p_.read_latency);
      if (!hit) *channel = ready;
      t.cache_hit = hit;
      t.done = link(r.length, ready);
      t.transfer = transfer_time(r.length, p_.bandwidth);
      return t;
    }
    case IoOp::write:
    case IoOp::zero: {
      const Nanos arrived = link(r.length, now);
      t.transfer = transfer_time(r.length, p_.bandwidth);
      if (p_.cache && !r.fua && r.length <= p_.cache_size) {
        Nanos at = arrived;
        if (dirty_.bytes() + r.length > p_.cache_size) {  // program the cache first
          const Nanos start = std::max(arrived, flash_free_);
          at = program(dirty_.bytes(), start);
          destaged(at - start, t);
          flash_free_ = at;
        }
        dirty_.insert(r.offset, r.offset + r.length, r.tag);
        t.cache_hit = true;
        t.done = at + p_.write_latency;
        return t;
      }
      dirty_.erase(r.offset, r.offset + r.length);
      const Nanos start = std::max(arrived, flash_free_);
      t.queued = start - arrived;
      t.done = program(r.length, start) + p_.write_latency;
      return t;
    }
  }
  return t;
}

std::string SsdModel::describe() const {
  return "ssd: read " + format_duration(p_.read_latency) + ", write " + format_duration(p_.write_latency) +
         ", program " + format_duration(p_.program_latency) + " per " + format_size(p_.page) + " page, " +
         std::to_string(p_.channels) + " channels, " +
         (p_.bandwidth == 0 ? std::string("unlimited bandwidth") : format_size(p_.bandwidth) + "/s") + ", " +
         (p_.cache ? "write cache " + format_size(p_.cache_size) : std::string("write cache off"));
}

}  // namespace nvj
