// nvj crash check and nvj crash merge: check a recording's crash states by
// the fast path (crashlab/crash_check.h) and, on those it fails and a
// sample of the others, by the ground truth (ground_truth.h), a shard of
// them or all; join shards' results (check_results.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "crashlab/crash_check.h"

namespace nvj::cli {

struct CheckArgs {
  std::string recording;
  std::string shard;  // "I/N"; empty: from the environment (shard.h)
  std::string out;    // a folder for results.json; empty: none
  // The ground truth (ground_truth.h): none, failing (the states the fast
  // path fails), sample (those and one passing state in `sample`), all.
  // Empty: sample, or none where it cannot run (not root).
  std::string verify;
  std::uint64_t sample = 64;
  std::uint64_t minimize = 100;  // failing states whose cause is minimized (the first ones)
  std::string scratch;        // the ground truth's files; empty: a new folder in $TMPDIR or /tmp
  std::string mount_options;  // the ground truth's mount, besides journal_path=
  crashlab::CheckOptions options;
  bool no_marks = false, no_persistence = false;
  std::uint64_t every = 0;
};
int crash_check_main(const CheckArgs& args);

struct ImageArgs {
  CheckArgs check;        // the recording and the options that number the states
  std::vector<std::string> states;  // their ordinals
  std::string out;        // the folder for the images (DIR/N/ for each of several)
};
int crash_image_main(const ImageArgs& args);

struct MergeArgs {
  std::vector<std::string> inputs;  // shards' results.json, or folders holding one
  std::string out;                  // the folder for the merged results.json
};
int crash_merge_main(const MergeArgs& args);

}  // namespace nvj::cli
