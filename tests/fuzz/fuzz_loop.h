// SPDX-License-Identifier: BSD-3-Clause
// The command line and main loop every fuzz driver shares (fuzz_driver.cpp
// for the image reader, journal_decoder_driver.cpp, journal_inspect_driver.cpp):
// each driver builds its seeds and mutates them; this runs the target on
// what it makes for a number of iterations, keeps the slowest input, writes
// the seeds out for libFuzzer's corpus, or replays files. An input the
// target aborts or crashes on is saved as NAME-crash-input in the current
// directory (sanitizers: with ASAN_OPTIONS=abort_on_error=1).
//
//   NAME --iterations N [--seed S] [--seconds T] [--save-slowest FILE] [driver flags]
//   NAME --seconds T [--seed S] ...
//   NAME --write-seeds DIR    the seeds as inputs
//   NAME FILE...              runs the target once on each file
//
// The same --seed and --iterations make the same inputs on any machine and
// in any build, so a run is reproducible and does the same work everywhere.
// --seconds bounds a run's time as well (for long runs by hand: it stops at
// whichever comes first, and says so); alone, it fuzzes for that long.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace nvj::fuzz {

// A flag of one driver's own, such as --reasons.
struct DriverFlag {
  const char* name;  // "--reasons"
  const char* help;  // for the usage message
};

struct LoopOptions {
  std::uint64_t iterations = 0;  // 0: no bound on the count
  std::uint64_t seconds = 0;     // 0: no bound on the time
  std::uint64_t seed = 1;
  std::string save_slowest;
  std::string write_seeds;
  std::vector<std::string> files;
  std::vector<std::string> flags;  // the driver flags given

  bool has(std::string_view flag) const;
};

// Exits with a usage message (status 2) on a bad command line, and when a
// fuzzing run has neither --iterations nor --seconds.
LoopOptions parse_loop_options(const char* name, int argc, char** argv, std::span<const DriverFlag> flags = {});

struct NamedInput {
  std::string name;
  std::vector<std::uint8_t> bytes;
};

struct FuzzLoop {
  const char* name = "";
  std::vector<NamedInput> seeds;  // the unmutated inputs
  // Makes the next mutated input; returns the index of its seed.
  std::function<std::size_t(std::vector<std::uint8_t>& input)> next;
  // Optional: called after the target ran on an input made from seed `seed`.
  std::function<void(std::size_t seed)> after;
  // Optional: more about a seed, at the end of its line in the summary.
  std::function<std::string(std::size_t seed)> seed_note;
  // Optional: what the target made of a replayed file ("done" without it).
  std::function<std::string()> verdict;
  // Optional: a line or two about what the target saw, printed at the end.
  std::function<void()> summary;
};

// Does what the options say; returns main's exit status.
int run_fuzz_loop(const LoopOptions& options, const FuzzLoop& loop);

}  // namespace nvj::fuzz
