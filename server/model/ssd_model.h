// SPDX-License-Identifier: BSD-3-Clause
// SsdModel: a datacenter NVMe SSD. Reads take the read latency on one of
// `channels` flash channels plus the transfer over the shared link. Writes
// land in the drive's volatile cache (on by default, like real drives) after
// the write latency; the cached pages are programmed to flash on flush, and
// before a write that does not fit, `channels` pages at a time. With the
// cache off, or FUA, a write waits for its pages to be programmed.
//
// Parameters (ssd:KEY=VALUE,...):
//   read-latency=DURATION     default 80us
//   write-latency=DURATION    into the cache, default 15us
//   program-latency=DURATION  one flash page, default 400us
//   page=SIZE                 flash page, default 16K
//   channels=N                default 16
//   bandwidth=SIZE            link bytes per second, 0 = unlimited; default 3G
//   cache=on|off              default on
//   cache-size=SIZE           default 1G
//   atomic=SIZE               what lands whole at a power cut, default 4K (the
//                             mapping unit: a 4 KiB write is all or nothing)
#pragma once

#include <vector>

#include "server/model/extent_set.h"
#include "server/model/model_spec.h"
#include "server/model/timing_model.h"

namespace nvj {

class SsdModel final : public TimingModel {
 public:
  struct Params {
    Nanos read_latency = 80 * kMicro;
    Nanos write_latency = 15 * kMicro;
    Nanos program_latency = 400 * kMicro;
    std::uint64_t page = 16 << 10;
    std::uint64_t channels = 16;
    std::uint64_t bandwidth = 3ull << 30;
    bool cache = true;
    std::uint64_t cache_size = 1ull << 30;
    std::uint64_t atomic = 4096;
  };
  static Params parse(const ModelSpec& spec);

  explicit SsdModel(Params params);
  IoTiming submit(const IoRequest& request, Nanos now) override;
  std::string describe() const override;
  bool volatile_cache() const override { return p_.cache; }
  // A flash drive with 512-byte logical sectors on 4 KiB pages: trim and
  // write zeroes, no rotation.
  DeviceTraits traits() const override { return {false, p_.cache, true, true, 512, 4096}; }
  std::uint64_t atomic_unit() const override { return p_.atomic; }
  std::unique_ptr<TimingModel> restarted() const override { return std::make_unique<SsdModel>(p_); }

 private:
  // Programs `bytes` worth of pages across all channels from `start`.
  Nanos program(std::uint64_t bytes, Nanos start) const;
  Nanos link(std::uint64_t bytes, Nanos start);
  // Accounts `time` of programming the whole cache to `t`; empties the cache.
  void destaged(Nanos time, IoTiming& t);

  Params p_;
  std::vector<Nanos> channel_free_;
  Nanos link_free_ = 0;
  Nanos flash_free_ = 0;  // programming of destaged pages occupies all channels
  ExtentSet dirty_;
};

}  // namespace nvj
