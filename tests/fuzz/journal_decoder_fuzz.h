// SPDX-License-Identifier: BSD-3-Clause
// The journal decoder's fuzz target: what journal_decoder_driver.cpp (or
// libFuzzer) feeds to LLVMFuzzerTestOneInput.
//
// An input is a journal and what happens to it:
//   - u8 which of journals() (modulo their count), u8 flags (kFlag*);
//   - then operations until the input ends, each a u8 opcode (modulo 2):
//       kWrite: le64 offset, le32 length, u8 fua, le32 arrival step and
//               le32 completion delay (both signed nanoseconds), then
//               length bytes (fewer when the input ends first);
//       kFlush: le32 step (signed nanoseconds).
// The journal is an image of maxlen blocks in memory; a write lands in it
// (cut at its end) and then goes to the decoder. A write that would leave
// a superblock with more than kMaxFuzzBlocks blocks is dropped, so the
// decoder's per-block arrays stay small and the malloc limit means growth.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "fscore/jbd2/journal_superblock.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace nvj::fuzz::decoder {

inline constexpr std::size_t kHeaderSize = 2;
inline constexpr std::uint8_t kWrite = 0, kFlush = 1;
inline constexpr std::size_t kWriteHeaderSize = 1 + 8 + 4 + 1 + 4 + 4;
inline constexpr std::size_t kFlushSize = 1 + 4;
inline constexpr std::uint8_t kFlagSuperblockPresent = 1;  // the journal's superblock is there (clean) at the start
inline constexpr std::uint8_t kFlagOracle = 2;             // classify logged blocks (metadata: even targets)
inline constexpr std::uint32_t kMaxFuzzBlocks = 4096;

// A journal the input may choose: its superblock (start 0) and where it is
// (0: an internal journal; else a journal device's block 1024/bs + 1).
struct JournalChoice {
  fscore::jbd2::JournalSuperblock sb;
  std::uint64_t superblock_offset = 0;
};
const std::vector<JournalChoice>& journals();

struct Outcome {
  std::uint64_t inputs = 0;
  std::uint64_t writes = 0;
  std::uint64_t dropped_writes = 0;  // would have made the journal too large
  std::uint64_t transactions = 0;
  std::uint64_t logged_blocks = 0;
  std::uint64_t problems = 0;
  std::uint64_t synchronized_at_end = 0;
  // Checks that found the head outside the log after a superblock update
  // moved s_first or the fast-commit area (the decoder keeps its cursor).
  std::uint64_t head_outside_log = 0;
};
const Outcome& outcome();

}  // namespace nvj::fuzz::decoder
