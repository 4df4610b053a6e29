// SPDX-License-Identifier: BSD-3-Clause
#include "tools/nvj/crash/state_options.h"

#include <string>

namespace nvj::cli {

void enumeration_options(Command& c, std::uint64_t& every, bool& no_marks, bool& no_persistence,
                         crashlab::StrategyOptions& strategies) {
  c.count("--every", every, 1, ~std::uint64_t{0}, "also a crash point after every N-th change").value_name("N");
  c.flag("--no-marks", no_marks, "no crash points at marks");
  c.flag("--no-persistence", no_persistence, "no crash points at flush and FUA completions");
  c.count("--keep", strategies.keep, 0u, 2u, "subsets of the volatile changes up to this size (default 2)")
      .value_name("K");
  c.count("--random", strategies.random, 0u, 1000000u, "random subsets per crash point (default 0)").value_name("N");
  c.count("--seed", strategies.seed, 0, ~std::uint64_t{0}, "seed of the random subsets (default 1)").value_name("N");
  c.count("--torn", strategies.torn, 0u, 1024u, "torn states per volatile write: cuts at atomic units (default 0)")
      .value_name("N");
  c.size("--torn-unit", strategies.torn_unit, 512, std::uint64_t{1} << 20,
         "the atomic unit torn writes are cut at, a multiple of 512 (default: each export's, from the recording)")
      .value_name("SIZE");
}

// A usage error unless the atomic unit is whole sectors.
void check_torn_unit(const crashlab::StrategyOptions& strategies, const char* command) {
  if (strategies.torn_unit % 512 != 0)
    throw UsageError(std::string(command) + ": --torn-unit " + std::to_string(strategies.torn_unit) +
                     ": the atomic unit is whole 512-byte sectors (512, 4096, ...)");
}

}  // namespace nvj::cli
