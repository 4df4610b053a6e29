// The fast path's check of one crash state of an ext4 filesystem, in
// process: the journal replayed into the state as e2fsck would replay it
// (fscore::ext4::replay_journal_like_e2fsck, writing into the state, never into the
// recording), then every fact the oracle holds read back with
// fscore::ext4::TreeReader (metadata checksums checked as it reads). A filesystem
// that does not read back (a broken superblock, a journal that cannot be
// replayed, a checksum that fails) is a verdict too, not an exception. Pure.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "fscore/block_io.h"
#include "crashlab/fact_oracle.h"

namespace crashlab {

enum class Verdict : std::uint8_t {
  pass,        // every fact holds
  fail,        // a fact is broken
  unreadable,  // the filesystem does not read back (or its journal does not replay)
};
const char* to_string(Verdict verdict);

struct StateVerdict {
  Verdict verdict = Verdict::pass;
  std::vector<FactViolation> violations;  // fail
  std::string error;                      // unreadable: what is wrong
  bool replayed = false;                  // the journal had something to replay
  std::uint32_t replayed_blocks = 0;
};

// The filesystem is `fs`; `journal` its external journal's device, or
// nullptr. Both are written (the replay). `now` is the time the replay
// stamps in the superblock. `cache`, kept from state to state, spares
// reading files whose blocks hold what they held before.
StateVerdict check_ext4_state(fscore::BlockSource& fs_source, fscore::BlockSink& fs_sink, fscore::BlockSource* journal_source,
                              fscore::BlockSink* journal_sink, const FactOracle& oracle, std::uint32_t now,
                              ContentCache* cache = nullptr);

}  // namespace crashlab
