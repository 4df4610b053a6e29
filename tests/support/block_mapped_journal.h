// SPDX-License-Identifier: BSD-3-Clause
// Test support: an ext4 image's journal turned into the block-mapped journal
// ext3 has, for the image reader's tests and its fuzz driver's seeds.
#pragma once

#include <cstdint>
#include <vector>

#include "fscore/ext4/block_map.h"
#include "tests/support/sparse_image.h"

namespace nvj::test {

// Rewrites the journal inode (inode 8) of an image ImageBuilder made so that
// it maps `journal_runs` (the journal's blocks, in log order) the way ext3
// maps a file: 12 direct blocks, then a single, a double and a triple
// indirect block. The indirect blocks are taken from the unused end of the
// filesystem, going down; the bitmaps are left alone (the reader does not
// look at them). Returns the indirect blocks, in the order they were taken.
std::vector<std::uint64_t> make_journal_block_mapped(SparseImage& image,
                                                     const std::vector<fscore::ext4::BlockRun>& journal_runs);

}  // namespace nvj::test
