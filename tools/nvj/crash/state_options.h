// SPDX-License-Identifier: BSD-3-Clause
// The options that choose crash points and strategies, the same for nvj
// crash states, check, run, image and frames, so that what one numbers and
// counts is what the others check, write and list.
#pragma once

#include <cstdint>

#include "common/command_line.h"
#include "crashlab/states/crash_states.h"

namespace nvj::cli {

// --every, --no-marks, --no-persistence, --keep, --random, --seed, --torn,
// --torn-unit.
void enumeration_options(Command& c, std::uint64_t& every, bool& no_marks, bool& no_persistence,
                         crashlab::StrategyOptions& strategies);

// A UsageError naming `command` unless the atomic unit is whole sectors.
void check_torn_unit(const crashlab::StrategyOptions& strategies, const char* command);

}  // namespace nvj::cli
