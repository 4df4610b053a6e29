// SPDX-License-Identifier: BSD-3-Clause
// HddModel: a spinning disk (default: a 7200 rpm SATA drive).
//
// One actuator serves requests in arrival order. A media access seeks
// (HddGeometry), waits for the sector to come round (the platter's angle
// follows time from a seeded phase), then transfers at the zone's rate.
// After a read the drive keeps reading the track into a read-ahead segment
// while the arm is idle, so back-to-back sequential reads do not pay a
// revolution. The write cache (volatile) takes writes at interface speed,
// destages dirty data in elevator order whenever the actuator would
// otherwise be idle (from the time the data came), before a write that does
// not fit, and on flush, accounting each range's time to its tag; FUA
// writes and writes with the cache off go to the media.
//
// Parameters (hdd:KEY=VALUE,...):
//   rpm=N                 default 7200
//   seek-track=DURATION   track-to-track seek, default 1ms
//   seek-avg=DURATION     average seek (a third of the stroke), default 8.5ms
//   seek-full=DURATION    full-stroke seek, default 17ms
//   rate-outer=SIZE       media rate at the outer edge per second, default 250M
//   rate-inner=SIZE       at the inner edge, default 120M
//   capacity=SIZE         platter capacity; default the export's size
//   cache=on|off          volatile write cache, default on
//   cache-size=SIZE       default 64M
//   readahead=SIZE        read-ahead segment, default 1M; 0 turns it off
//   interface=SIZE        link rate per second (SATA 6 Gb/s), default 550M
//   overhead=DURATION     command overhead, default 50us
//   seed=N                initial platter angle, default 1
//   atomic=SIZE           what lands whole at a power cut, default 4K (the physical
//                         sector it tells the host: a 512e drive writes whole ones)
#pragma once

#include <cstdint>

#include "server/model/extent_set.h"
#include "server/model/hdd_geometry.h"
#include "server/model/model_spec.h"
#include "server/model/timing_model.h"

namespace nvj {

class HddModel final : public TimingModel {
 public:
  struct Params {
    HddGeometry::Params geometry{0, 7200, 250ull << 20, 120ull << 20, 1 * kMilli, 8500 * kMicro, 17 * kMilli};
    bool cache = true;
    std::uint64_t cache_size = 64ull << 20;
    std::uint64_t readahead = 1ull << 20;
    std::uint64_t interface_rate = 550ull << 20;
    Nanos overhead = 50 * kMicro;
    std::uint64_t seed = 1;
    std::uint64_t atomic = 4096;
  };
  static Params parse(const ModelSpec& spec, std::uint64_t device_size);

  explicit HddModel(const Params& params);
  IoTiming submit(const IoRequest& request, Nanos now) override;
  std::string describe() const override;
  bool volatile_cache() const override { return p_.cache; }
  // A SATA disk with 4 KiB physical sectors that reads and writes 512-byte
  // ones (512e): rotating, no trim, no write zeroes (libata gives ATA disks
  // no WRITE SAME).
  DeviceTraits traits() const override { return {true, p_.cache, false, false, 512, 4096}; }
  std::uint64_t atomic_unit() const override { return p_.atomic; }
  std::unique_ptr<TimingModel> restarted() const override { return std::make_unique<HddModel>(p_); }

  const HddGeometry& geometry() const { return geometry_; }
  std::uint64_t dirty_bytes() const { return dirty_.bytes(); }

 private:
  // Moves the arm to `offset` and transfers `length` bytes, starting no
  // earlier than `start`; adds to `t`; returns the end time.
  Nanos media_access(std::uint64_t offset, std::uint64_t length, Nanos start, IoTiming& t);
  // Writes one dirty range (at most 1 MiB) home, from `start`.
  Nanos destage_one(Nanos start, IoTiming& t);
  // Destages while the actuator would be idle before `now`; adds the time
  // to t.destaged_by_tag only.
  void destage_idle(Nanos now, IoTiming& t);
  double angle_at(Nanos t) const;
  bool readahead_hit(std::uint64_t offset, std::uint64_t length, Nanos now, Nanos& available) const;
  void stop_readahead(Nanos at);

  Params p_;
  HddGeometry geometry_;
  double phase_;
  Nanos busy_until_ = 0;
  std::uint64_t head_cylinder_ = 0;
  std::uint64_t head_offset_ = 0;  // where the last media access ended
  ExtentSet dirty_;
  // Read-ahead segment: [ra_begin_, ra_limit_) will be in the buffer, the
  // byte at ra_mark_ arriving at ra_time_ and the rest at the media rate.
  std::uint64_t ra_begin_ = 0, ra_mark_ = 0, ra_limit_ = 0;
  Nanos ra_time_ = 0;
};

}  // namespace nvj
