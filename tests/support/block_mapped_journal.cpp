// SPDX-License-Identifier: BSD-3-Clause
#include "tests/support/block_mapped_journal.h"

#include <array>
#include <functional>
#include <stdexcept>

#include "fscore/crc32c.h"
#include "fscore/endian.h"
#include "fscore/ext4/features.h"
#include "fscore/ext4/group_desc.h"
#include "fscore/ext4/inode.h"
#include "fscore/ext4/superblock.h"

namespace nvj::test {

namespace ext4 = fscore::ext4;

std::vector<std::uint64_t> make_journal_block_mapped(SparseImage& image,
                                                     const std::vector<ext4::BlockRun>& journal_runs) {
  std::array<std::uint8_t, ext4::kSuperSize> super{};
  image.read(ext4::kSuperOffset, super);
  const ext4::Superblock sb = ext4::decode_superblock(super);
  const std::uint32_t bs = sb.block_size();

  std::vector<std::uint32_t> journal;
  for (const ext4::BlockRun& r : journal_runs)
    for (std::uint64_t i = 0; i < r.count; ++i) journal.push_back(static_cast<std::uint32_t>(r.start + i));
  std::vector<std::uint64_t> indirect;
  std::uint64_t next_free = sb.blocks_count;
  std::size_t next = 0;
  // The block number to put in a slot of `level` (0: a journal block, 1: a
  // single indirect block, ...), the blocks below it written.
  const std::function<std::uint32_t(int)> map = [&](int level) -> std::uint32_t {
    if (level == 0) return journal[next++];
    do {
      if (next_free == 0) throw std::runtime_error("no unused block left for an indirect block");
      --next_free;
    } while (image.holds(next_free * bs, bs));
    const std::uint64_t at = next_free;
    indirect.push_back(at);
    std::vector<std::uint8_t> block(bs, 0);
    for (std::size_t i = 0; i < bs / 4 && next < journal.size(); ++i)
      fscore::store_le<std::uint32_t>(block.data() + 4 * i, map(level - 1));
    image.write(at * bs, block);
    return static_cast<std::uint32_t>(at);
  };
  std::array<std::uint8_t, 60> i_block{};
  for (int slot = 0; slot < 15 && next < journal.size(); ++slot)
    fscore::store_le<std::uint32_t>(i_block.data() + 4 * slot, map(slot < 12 ? 0 : slot - 11));
  if (next < journal.size()) throw std::runtime_error("the journal has more blocks than a triple indirect map holds");

  // Inode 8 is in group 0's inode table.
  const std::uint32_t desc_size = (sb.feature_incompat & ext4::incompat::k64bit) != 0 ? sb.desc_size : 32;
  std::vector<std::uint8_t> desc(desc_size);
  image.read((std::uint64_t{sb.first_data_block} + 1) * bs, desc);
  const std::uint64_t at = ext4::decode_group_desc(desc).inode_table * bs +
                           std::uint64_t{ext4::kJournalIno - 1} * sb.inode_size;
  std::vector<std::uint8_t> raw(sb.inode_size);
  image.read(at, raw);
  ext4::Inode j = ext4::decode_inode(raw);
  j.flags &= ~ext4::kExtentsFl;
  j.block = i_block;
  j.blocks_512 = (journal.size() + indirect.size()) * (bs / 512);
  // The checksum seed as ImageBuilder makes it (it does not use csum_seed).
  ext4::encode_inode(j, ext4::kJournalIno, fscore::crc32c(~0u, sb.uuid.data(), sb.uuid.size()), raw);
  image.write(at, raw);
  return indirect;
}

}  // namespace nvj::test
