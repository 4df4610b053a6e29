// SPDX-License-Identifier: BSD-3-Clause
// RequestObserver: sees every request a device served, after its bytes have
// landed and its time has come (docs/design.md, "A request's way through").
// The journal tracer is one. Called on the serving thread: observers keep
// their own locks and their work short.
#pragma once

#include <cstdint>

#include "common/clock.h"
#include "server/model/timing_model.h"

namespace nvj {

struct ObservedRequest {
  IoOp op = IoOp::read;
  std::uint64_t offset = 0;
  std::uint64_t length = 0;
  bool fua = false;
  const std::uint8_t* data = nullptr;  // a write's bytes, else nullptr
  bool in_region = false;              // in one of the device's regions (an internal journal)
  Nanos arrived = 0;
  Nanos completed = 0;
  Nanos device_time = 0;  // the model's service time for its own bytes: seek, rotation, transfer
                          // (destaging cached data is charged to the region it belongs to: DeviceStats::destaged)
};

class RequestObserver {
 public:
  virtual ~RequestObserver() = default;
  virtual void observe(const ObservedRequest& request) = 0;
};

}  // namespace nvj
