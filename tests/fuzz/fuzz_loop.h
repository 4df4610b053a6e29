// The command line and main loop the journal fuzz targets' drivers share
// (journal_decoder_driver.cpp, journal_inspect_driver.cpp): each driver
// builds its seeds and mutates them; this runs the target on what it makes
// for a time or a number of iterations, keeps the slowest input, writes the
// seeds out for libFuzzer's corpus, or replays files. An input the target
// aborts or crashes on is saved as NAME-crash-input in the current
// directory (sanitizers: with ASAN_OPTIONS=abort_on_error=1).
//
//   NAME [--seconds N] [--iterations N] [--seed S] [--save-slowest FILE]
//   NAME --write-seeds DIR    the seeds as inputs
//   NAME FILE...              runs the target once on each file
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace nvj::fuzz {

struct LoopOptions {
  double seconds = 0;
  std::uint64_t iterations = 0;
  std::uint64_t seed = 1;
  std::string save_slowest;
  std::string write_seeds;
  std::vector<std::string> files;
};

// Exits with a usage message on a bad command line. Without --seconds or
// --iterations the loop runs for 10 seconds.
LoopOptions parse_loop_options(const char* name, int argc, char** argv);

struct NamedInput {
  std::string name;
  std::vector<std::uint8_t> bytes;
};

struct FuzzLoop {
  const char* name = "";
  std::vector<NamedInput> seeds;  // the unmutated inputs
  // Makes the next mutated input; returns the index of its seed.
  std::function<std::size_t(std::vector<std::uint8_t>& input)> next;
  // A line or two about what the target saw, printed at the end.
  std::function<void()> summary;
};

// Does what the options say; returns main's exit status.
int run_fuzz_loop(const LoopOptions& options, const FuzzLoop& loop);

}  // namespace nvj::fuzz
