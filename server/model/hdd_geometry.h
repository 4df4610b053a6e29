// SPDX-License-Identifier: BSD-3-Clause
// HddGeometry: where a byte lives on a spinning disk and how long the arm
// takes to get there.
//
// Zones: the media rate falls linearly from the outer edge (offset 0) to the
// inner edge, and a track holds what passes under the head in one
// revolution, so outer tracks are longer. The number of cylinders follows
// from the capacity. Seek time rises with the square root of the distance
// from the track-to-track time (1 cylinder) to the average (a third of the
// stroke, as datasheets define it), then linearly to the full-stroke time:
// the published shape of a seek curve, through the three published points.
#pragma once

#include <cstdint>

#include "common/duration.h"

namespace nvj {

class HddGeometry {
 public:
  struct Params {
    std::uint64_t capacity;       // bytes on the platters
    std::uint64_t rpm;
    std::uint64_t rate_outer;     // bytes per second at offset 0
    std::uint64_t rate_inner;     // at the last byte
    Nanos seek_track;             // 1 cylinder
    Nanos seek_average;           // a third of the stroke
    Nanos seek_full;              // the whole stroke
  };

  explicit HddGeometry(const Params& p);

  Nanos revolution() const { return revolution_; }
  std::uint64_t cylinders() const { return cylinders_; }
  std::uint64_t cylinder_of(std::uint64_t offset) const;
  // Where in its track `offset` lies, as a fraction of a revolution [0, 1).
  double angle_of(std::uint64_t offset) const;
  std::uint64_t rate_at(std::uint64_t cylinder) const;  // bytes per second
  Nanos seek_time(std::uint64_t distance) const;        // cylinders

 private:
  double track_bytes(double cylinder) const;
  double start_of(double cylinder) const;  // bytes before the cylinder

  Params p_;
  Nanos revolution_;
  std::uint64_t cylinders_;
  double outer_track_;
  double inner_track_;
};

}  // namespace nvj
