// SPDX-License-Identifier: BSD-3-Clause
// TimingModel: when a device completes a request. A model is a pure function
// of (request, its own state, time): it never sleeps and never reads a clock,
// so tests drive it in virtual time. The device calls submit() in arrival
// order, one at a time (it holds a lock), and waits until the time returned.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>

#include "common/duration.h"
#include "server/model/device_traits.h"

namespace nvj {

enum class IoOp { read, write, flush, trim, zero };

// Tags tell apart the writes of parts of one device that share a model
// (an internal journal on the data disk): a cache keeps each write's tag,
// and destaging is accounted to the tag of the data it writes.
constexpr std::size_t kIoTags = 4;

struct IoRequest {
  IoOp op = IoOp::read;
  std::uint64_t offset = 0;
  std::uint64_t length = 0;
  bool fua = false;
  std::uint8_t tag = 0;  // below kIoTags
};

// What the device did for one request, for the statistics.
struct IoTiming {
  Nanos done = 0;           // completion time on the device's clock
  Nanos queued = 0;         // waiting for the device (actuator, channel)
  Nanos seek = 0;           // hdd: moving the arm
  Nanos rotation = 0;       // hdd: waiting for the sector
  Nanos transfer = 0;       // moving the bytes
  Nanos destage = 0;        // writing cached data to the media first (flush, full cache)
  // All the model spent writing cached data home during this call, by the
  // tag it was written with: `destage`, and what the idle drive did before
  // the request came (which no request waited for).
  std::array<Nanos, kIoTags> destaged_by_tag{};
  std::uint32_t seeks = 0;          // hdd: arm movements, destaging included
  std::uint64_t seek_distance = 0;  // hdd: cylinders, all of them
  bool cache_hit = false;   // served by the drive's cache (read hit, cached write)
};

class TimingModel {
 public:
  virtual ~TimingModel() = default;
  virtual IoTiming submit(const IoRequest& request, Nanos now) = 0;
  // "nvram: write 2 us, read 1 us, 2 GiB/s, 4 channels"
  virtual std::string describe() const = 0;
  // True if acknowledged writes sit in a volatile cache until a flush.
  virtual bool volatile_cache() const = 0;
  // The bytes a write lands in whole at a power cut (atomic=SIZE): a
  // multiple of 512.
  virtual std::uint64_t atomic_unit() const = 0;
  // What a real device of this kind tells the host (device_traits.h): its
  // rotation, its write cache (write-back exactly when volatile_cache()),
  // trim, zero and sector sizes.
  virtual DeviceTraits traits() const = 0;
  // The same device just powered on: same parameters, empty cache, idle.
  virtual std::unique_ptr<TimingModel> restarted() const = 0;
};

}  // namespace nvj
