// SPDX-License-Identifier: BSD-3-Clause
// NvramModel: battery-backed NVRAM (the journal device of docs/design.md).
// Durable on acknowledgement, so flush costs nothing. A request waits for one
// of `channels` parallel units, moves its bytes over a link shared by all of
// them at `bandwidth`, then takes the read or write latency.
//
// Parameters (nvram:KEY=VALUE,...):
//   latency=DURATION        read and write latency together
//   read-latency=DURATION   default 1us
//   write-latency=DURATION  default 2us
//   bandwidth=SIZE          bytes per second over the link, 0 = unlimited; default 2G
//   channels=N              requests served at once, default 4
//   atomic=SIZE             what lands whole at a power cut, default 512
#pragma once

#include <vector>

#include "server/model/model_spec.h"
#include "server/model/timing_model.h"

namespace nvj {

class NvramModel final : public TimingModel {
 public:
  struct Params {
    Nanos read_latency = 1 * kMicro;
    Nanos write_latency = 2 * kMicro;
    std::uint64_t bandwidth = std::uint64_t{2} << 30;
    std::uint64_t channels = 4;
    std::uint64_t atomic = 512;
  };
  static Params parse(const ModelSpec& spec);

  explicit NvramModel(Params params);
  IoTiming submit(const IoRequest& request, Nanos now) override;
  std::string describe() const override;
  bool volatile_cache() const override { return false; }
  // Battery-backed RAM: write-through (durable on acknowledgement, so the
  // host sends no flushes), 512-byte sectors, no trim or write zeroes (no
  // flash to discard; zeroes are written as any other data).
  DeviceTraits traits() const override { return {false, false, false, false, 512, 512}; }
  std::uint64_t atomic_unit() const override { return p_.atomic; }
  std::unique_ptr<TimingModel> restarted() const override { return std::make_unique<NvramModel>(p_); }

 private:
  Params p_;
  std::vector<Nanos> channel_free_;  // when each channel is next idle
  Nanos link_free_ = 0;
};

}  // namespace nvj
