// SPDX-License-Identifier: BSD-3-Clause
// The timing model named by a spec: none, nvram, ssd or hdd.
#pragma once

#include <cstdint>
#include <memory>

#include "server/model/model_spec.h"
#include "server/model/timing_model.h"

namespace nvj {

// nullptr for "none" (no timing: raw speed). Throws std::invalid_argument
// naming what is wrong with the spec.
std::unique_ptr<TimingModel> make_model(const ModelSpec& spec, std::uint64_t device_size);

// Checks a spec without a device (sizes that depend on it are not checked).
void check_model_spec(const ModelSpec& spec);

}  // namespace nvj
