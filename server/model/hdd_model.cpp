// SPDX-License-Identifier: BSD-3-Clause
#include "server/model/hdd_model.h"

#include <algorithm>
#include <cmath>

#include "common/size.h"

namespace nvj {

HddModel::Params HddModel::parse(const ModelSpec& spec, std::uint64_t device_size) {
  ModelParams in(spec);
  Params p;
  auto& g = p.geometry;
  g.rpm = in.count("rpm", g.rpm, 1000, 30000);
  g.seek_track = in.duration("seek-track", g.seek_track);
  g.seek_average = in.duration("seek-avg", g.seek_average);
  g.seek_full = in.duration("seek-full", g.seek_full);
  g.rate_outer = in.size("rate-outer", g.rate_outer);
  g.rate_inner = in.size("rate-inner", g.rate_inner);
  g.capacity = in.size("capacity", device_size);
  p.cache = in.on_off("cache", p.cache);
  p.cache_size = in.size("cache-size", p.cache_size);
  p.readahead = in.size("readahead", p.readahead);
  p.interface_rate = in.size("interface", p.interface_rate);
  p.overhead = in.duration("overhead", p.overhead);
  p.seed = in.count("seed", p.seed, 0, ~0ull);
  p.atomic = in.atomic_unit(p.atomic);
  in.finish();
  if (g.rate_outer == 0 || g.rate_inner == 0 || g.rate_inner > g.rate_outer)
    throw std::invalid_argument("hdd: rate-outer and rate-inner must be above 0, the inner no faster than the outer");
  if (!(g.seek_track <= g.seek_average && g.seek_average <= g.seek_full))
    throw std::invalid_argument("hdd: expected seek-track <= seek-avg <= seek-full");
  if (g.capacity < device_size)
    throw std::invalid_argument("hdd: capacity=" + format_size(g.capacity) + " is smaller than the export (" +
                                format_size(device_size) + ")");
  if (p.cache && p.cache_size == 0) throw std::invalid_argument("hdd: cache-size must be above 0 with cache=on");
  return p;
}

HddModel::HddModel(const Params& params) : p_(params), geometry_(params.geometry) {
  // A seeded starting angle, so runs are repeatable and differ by seed.
  std::uint64_t x = params.seed * 0x9E3779B97F4A7C15ull + 0x632BE59BD9B4E019ull;
  x ^= x >> 31;
  x *= 0xBF58476D1CE4E5B9ull;
  x ^= x >> 29;
  phase_ = static_cast<double>(x >> 11) / static_cast<double>(1ull << 53);
}

double HddModel::angle_at(Nanos t) const {
  const double turns = phase_ + static_cast<double>(t) / static_cast<double>(geometry_.revolution());
  return turns - std::floor(turns);
}

Nanos HddModel::media_access(std::uint64_t offset, std::uint64_t length, Nanos start, IoTiming& t) {
  stop_readahead(start);
  const std::uint64_t cylinder = geometry_.cylinder_of(offset);
  const std::uint64_t distance =
      cylinder > head_cylinder_ ? cylinder - head_cylinder_ : head_cylinder_ - cylinder;
  const Nanos seek = geometry_.seek_time(distance);
  const Nanos arrive = start + seek;
  double wait = geometry_.angle_of(offset) - angle_at(arrive);
  wait -= std::floor(wait);
  const auto rotation = static_cast<Nanos>(wait * static_cast<double>(geometry_.revolution()));
  const Nanos transfer = transfer_time(length, geometry_.rate_at(cylinder));
  t.seek += seek;
  t.rotation += rotation;
  t.transfer += transfer;
  t.seek_distance += distance;
  if (distance > 0) ++t.seeks;
  head_cylinder_ = geometry_.cylinder_of(offset + std::max<std::uint64_t>(length, 1) - 1);
  head_offset_ = offset + length;
  return arrive + rotation + transfer;
}

Nanos HddModel::destage_one(Nanos start, IoTiming& t) {
  const auto range = dirty_.next_from(head_offset_);
  const std::uint64_t length = std::min<std::uint64_t>(range->end - range->begin, 1ull << 20);
  // Its time is destaging; its arm movements count as seeks.
  IoTiming part;
  const Nanos end = media_access(range->begin, length, start, part);
  t.destage += end - start;
  t.destaged_by_tag[range->tag] += end - start;
  t.seeks += part.seeks;
  t.seek_distance += part.seek_distance;
  dirty_.erase(range->begin, range->begin + length);
  return end;
}

// Background destaging belongs to no request: its time and seeks are not in
// the request's timing (the device's time split covers requests), only its
// time by tag (whose data went home).
void HddModel::destage_idle(Nanos now, IoTiming& t) {
  IoTiming background;
  while (!dirty_.empty() && busy_until_ < now) busy_until_ = destage_one(busy_until_, background);
  for (std::size_t tag = 0; tag < kIoTags; ++tag) t.destaged_by_tag[tag] += background.destaged_by_tag[tag];
}

// The arm leaves at `at`: the segment keeps what it had read by then.
void HddModel::stop_readahead(Nanos at) {
  if (ra_limit_ <= ra_mark_) return;
  if (at <= ra_time_) {
    ra_limit_ = ra_mark_;
    return;
  }
  const double rate = static_cast<double>(geometry_.rate_at(head_cylinder_));
  const auto read = ra_mark_ + static_cast<std::uint64_t>(static_cast<double>(at - ra_time_) * rate / 1e9);
  ra_limit_ = std::min(ra_limit_, read);
}

bool HddModel::readahead_hit(std::uint64_t offset, std::uint64_t length, Nanos now, Nanos& available) const {
  if (offset < ra_begin_ || offset + length > ra_limit_) return false;
  const std::uint64_t end = offset + length;
  available = end <= ra_mark_ ? now
                              : ra_time_ + transfer_time(end - ra_mark_, geometry_.rate_at(head_cylinder_));
  return true;
}

IoTiming HddModel::submit(const IoRequest& r, Nanos now) {
  IoTiming t;
  destage_idle(now, t);
  const Nanos link = transfer_time(r.length, p_.interface_rate);
  switch (r.op) {
    case IoOp::flush: {
      Nanos at = std::max(now, busy_until_);
      t.queued = at - now;
      while (!dirty_.empty()) at = destage_one(at, t);
      busy_until_ = at;
      t.done = at + p_.overhead;
      return t;
    }
    case IoOp::trim:  // a disk has nothing to do; the cache forgets the range
      dirty_.erase(r.offset, r.offset + r.length);
      t.done = now + p_.overhead;
      return t;
    case IoOp::read: {
      Nanos available = 0;
      if (dirty_.contains(r.offset, r.offset + r.length) ||
          (p_.readahead > 0 && readahead_hit(r.offset, r.length, now, available))) {
        t.cache_hit = true;
        t.transfer = link;
        t.done = std::max(now, available) + p_.overhead + link;
        return t;
      }
      // The command is taken while the arm finishes the previous request.
      const Nanos start = std::max(now + p_.overhead, busy_until_);
      t.queued = std::max<Nanos>(0, busy_until_ - now);
      const Nanos end = media_access(r.offset, r.length, start, t);
      busy_until_ = end;
      if (p_.readahead > 0) {
        ra_begin_ = r.offset;
        ra_mark_ = r.offset + r.length;
        ra_limit_ = ra_mark_ + p_.readahead;
        ra_time_ = end;
      }
      t.done = end + link;
      return t;
    }
    case IoOp::write:
    case IoOp::zero: {
      if (p_.cache && !r.fua && r.length <= p_.cache_size) {
        Nanos at = now;
        if (dirty_.bytes() + r.length > p_.cache_size) {  // make room first
          at = std::max(now, busy_until_);
          while (!dirty_.empty() && dirty_.bytes() + r.length > p_.cache_size) at = destage_one(at, t);
          busy_until_ = at;
        }
        t.cache_hit = true;
        t.transfer = link;
        t.done = at + p_.overhead + link;
        // An idle arm starts destaging when the data is in the cache, not
        // in the idle time before it came.
        if (dirty_.empty()) busy_until_ = std::max(busy_until_, t.done);
        dirty_.insert(r.offset, r.offset + r.length, r.tag);
        return t;
      }
      // Command and data cross the link while the arm finishes the previous request.
      const Nanos start = std::max(now + p_.overhead + link, busy_until_);
      t.queued = std::max<Nanos>(0, busy_until_ - now);
      dirty_.erase(r.offset, r.offset + r.length);
      const Nanos end = media_access(r.offset, r.length, start, t);
      busy_until_ = end;
      t.done = end;
      return t;
    }
  }
  return t;
}

std::string HddModel::describe() const {
  const auto& g = p_.geometry;
  return "hdd: " + std::to_string(g.rpm) + " rpm, seek " + format_duration(g.seek_track) + "/" +
         format_duration(g.seek_average) + "/" + format_duration(g.seek_full) + ", " + format_size(g.rate_outer) +
         "/s to " + format_size(g.rate_inner) + "/s, " + std::to_string(geometry_.cylinders()) + " cylinders, " +
         (p_.cache ? "write cache " + format_size(p_.cache_size) : std::string("write cache off"));
}

}  // namespace nvj
