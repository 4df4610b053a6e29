// SPDX-License-Identifier: BSD-3-Clause
// A torn write: a volatile write that a power cut caught half-way, so that
// only its first `bytes` reached the medium (a device writes a request's
// atomic units in order and loses the rest). A crash state keeps at most one
// (crashlab/states/crash_states.h, strategy torn); CrashImage and the fingerprints put its
// first bytes on top of the state's whole kept changes. Pure.
#pragma once

#include <cstddef>
#include <cstdint>

namespace crashlab {

struct TornWrite {
  std::size_t change = 0;   // index in changes(): a write
  std::uint64_t bytes = 0;  // how much of it, from its start: a cut at an atomic unit's boundary
};

}  // namespace crashlab
