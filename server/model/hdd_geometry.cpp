// SPDX-License-Identifier: BSD-3-Clause
#include "server/model/hdd_geometry.h"

#include <algorithm>
#include <cmath>

namespace nvj {

HddGeometry::HddGeometry(const Params& p)
    : p_(p),
      revolution_(static_cast<Nanos>(60.0 * static_cast<double>(kSecond) / static_cast<double>(p.rpm))),
      outer_track_(static_cast<double>(p.rate_outer) * static_cast<double>(revolution_) / 1e9),
      inner_track_(static_cast<double>(p.rate_inner) * static_cast<double>(revolution_) / 1e9) {
  // capacity = cylinders * (outer + inner) / 2 with a linear fall-off.
  cylinders_ = std::max<std::uint64_t>(
      1, static_cast<std::uint64_t>(std::ceil(2.0 * static_cast<double>(p.capacity) / (outer_track_ + inner_track_))));
}

double HddGeometry::track_bytes(double c) const {
  if (cylinders_ <= 1) return outer_track_;
  return outer_track_ - (outer_track_ - inner_track_) * c / static_cast<double>(cylinders_ - 1);
}

double HddGeometry::start_of(double c) const {
  if (cylinders_ <= 1) return 0;
  const double a = (outer_track_ - inner_track_) / (2.0 * static_cast<double>(cylinders_ - 1));
  return outer_track_ * c - a * c * c;
}

std::uint64_t HddGeometry::cylinder_of(std::uint64_t offset) const {
  if (cylinders_ <= 1) return 0;
  const double s = static_cast<double>(offset);
  const double a = (outer_track_ - inner_track_) / (2.0 * static_cast<double>(cylinders_ - 1));
  double c = 0;
  if (a <= 0) {
    c = s / outer_track_;
  } else {
    const double disc = std::max(0.0, outer_track_ * outer_track_ - 4.0 * a * s);
    c = (outer_track_ - std::sqrt(disc)) / (2.0 * a);
  }
  return std::min<std::uint64_t>(cylinders_ - 1, static_cast<std::uint64_t>(std::max(0.0, std::floor(c))));
}

double HddGeometry::angle_of(std::uint64_t offset) const {
  const auto c = cylinder_of(offset);
  const double within = static_cast<double>(offset) - start_of(static_cast<double>(c));
  const double a = within / track_bytes(static_cast<double>(c));
  return a - std::floor(a);
}

std::uint64_t HddGeometry::rate_at(std::uint64_t cylinder) const {
  if (cylinders_ <= 1) return p_.rate_outer;
  const double f = static_cast<double>(cylinder) / static_cast<double>(cylinders_ - 1);
  return static_cast<std::uint64_t>(static_cast<double>(p_.rate_outer) -
                                    (static_cast<double>(p_.rate_outer) - static_cast<double>(p_.rate_inner)) * f);
}

Nanos HddGeometry::seek_time(std::uint64_t distance) const {
  if (distance == 0) return 0;
  const double d = static_cast<double>(distance);
  const double full = static_cast<double>(std::max<std::uint64_t>(cylinders_ - 1, 1));
  const double third = full / 3.0;
  const auto t2t = static_cast<double>(p_.seek_track);
  const auto avg = static_cast<double>(p_.seek_average);
  const auto max = static_cast<double>(p_.seek_full);
  double t = 0;
  if (third <= 1.0) {
    t = t2t + (max - t2t) * (d - 1.0) / std::max(full - 1.0, 1.0);
  } else if (d <= third) {
    t = t2t + (avg - t2t) * std::sqrt((d - 1.0) / (third - 1.0));
  } else {
    t = avg + (max - avg) * (d - third) / (full - third);
  }
  return static_cast<Nanos>(std::llround(t));
}

}  // namespace nvj
