// SPDX-License-Identifier: BSD-3-Clause
// nvj crash frames: what each export saw around a crash state (or a crash
// point) of a recording, frame by frame, with what each block written is
// (crashlab/reports/block_meaning.h) and what the state made of each change
// (crashlab/reports/frame_timeline.h), as text or JSON.
#pragma once

#include <cstdint>
#include <string>

#include "tools/nvj/crash/check_command.h"

namespace nvj::cli {

struct FramesArgs {
  CheckArgs check;     // the recording and the options that number the states
  std::string state;   // an ordinal (results.json's "ordinal")
  std::string point;   // or a crash point's number
  std::uint64_t before = 20, after = 10;
  bool all = false;
  bool json = false;
};

int crash_frames_main(const FramesArgs& args);

}  // namespace nvj::cli
