// SPDX-License-Identifier: BSD-3-Clause
// What nvj crash check prints on stdout: the states per strategy (and how
// many of them a budget takes), each failing state it describes (what
// broke, its cause, the kernel's verdict), what was and was not checked,
// and last the summary line "N states checked in S s (R states/s), F
// failing".
#pragma once

#include <cstdint>
#include <string>

#include "common/json.h"
#include "crashlab/judge/state_walk.h"
#include "tools/nvj/crash/shard.h"

namespace nvj::cli {

void print_counts(const crashlab::CrashChecker& checker, const Shard& shard);
void describe_failure(const Json& state);
// What was and was not checked, from results.json's coverage, and how to
// check the rest; `recording` for the command to give.
void print_coverage(const Json& results, const std::string& recording);
// The signatures found, with how many states each.
void print_signatures(const Json& results);
void summary_line(std::uint64_t checked, double seconds, std::uint64_t failing);

}  // namespace nvj::cli
