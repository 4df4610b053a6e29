// SPDX-License-Identifier: BSD-3-Clause
// A realistic jbd2 journal's writes, for the journal benchmarks: what ext4's
// journal thread sends a journal device over one mount, laid out by
// fscore::jbd2::LogBuilder (the kernel's layout and checksums).
//
// One "session" is: the superblock update a mount's first commit writes
// (s_start = the log's first block), then transactions of a mix like a
// metadata-journalling ext4 (1 to 64 logged blocks, mostly small; some with
// revoke records; a few logged blocks beginning with the jbd2 magic, so
// escaped), wrapping around the log several times, with a superblock update
// moving the tail whenever the log is half full (a checkpoint frees the
// oldest transactions down to a quarter), and last the clean unmount's
// superblock update (s_start = 0). Replaying a session again is a remount:
// the log starts over at the first block with the same transaction ids.
//
// Every write is one journal block. The bytes live in one arena, in write
// order, so consecutive log blocks are contiguous there: a caller may batch
// them into larger requests.
#pragma once

#include <cstdint>
#include <cstring>
#include <deque>
#include <span>
#include <vector>

#include "fscore/endian.h"
#include "fscore/jbd2/journal_superblock.h"
#include "tests/support/jbd2_log_builder.h"

namespace nvj::bench {

struct JournalWrite {
  std::uint64_t offset = 0;  // bytes into the journal
  std::uint64_t arena = 0;   // where its bytes are in the arena
  bool superblock = false;   // a superblock update (the kernel sends it with FUA)
};

struct JournalSession {
  std::uint32_t block_size = 0;
  std::vector<std::uint8_t> arena;
  std::vector<JournalWrite> writes;
  // What the session holds, for checking a decoder against.
  std::uint64_t transactions = 0;
  std::uint64_t logged_blocks = 0;
  std::uint64_t escaped_blocks = 0;
  std::uint64_t revoked = 0;
  std::uint64_t log_blocks = 0;  // every block of every transaction
  std::uint64_t superblock_writes = 0;

  std::span<const std::uint8_t> bytes(const JournalWrite& w) const {
    return {arena.data() + w.arena, block_size};
  }
};

struct SessionShape {
  double wraps = 4;                  // log blocks written, in lengths of the log
  std::uint32_t first_tid = 1;
  std::uint64_t target_blocks = 1u << 28;  // logged blocks' homes lie below this
  std::uint64_t seed = 20240601;
};

namespace detail {

struct Rng {  // xorshift64*: fast, and the same stream everywhere
  std::uint64_t s;
  explicit Rng(std::uint64_t seed) : s(seed * 0x9E3779B97F4A7C15ull | 1) {}
  std::uint64_t next() {
    s ^= s >> 12;
    s ^= s << 25;
    s ^= s >> 27;
    return s * 0x2545F4914F6CDD1Dull;
  }
  std::uint64_t below(std::uint64_t n) { return next() % n; }
};

}  // namespace detail

// `sb` is the journal's superblock as it is on the device (format, uuid,
// users); `sb_offset` where it is in bytes (0 inside a filesystem, block
// 1024/bs + 1 on a journal device); `sb_block` the whole block holding it as
// it is now (the kernel rewrites the whole block).
inline JournalSession build_session(const fscore::jbd2::JournalSuperblock& sb, std::uint64_t sb_offset,
                                    std::span<const std::uint8_t> sb_block, const SessionShape& shape) {
  using namespace fscore::jbd2;
  JournalSession s;
  const std::uint32_t bs = sb.block_size;
  s.block_size = bs;
  const LogFormat format = LogFormat::from(sb);
  const std::uint32_t len = format.last - format.first;
  const auto total = static_cast<std::uint64_t>(shape.wraps * len);
  s.arena.reserve((total + total / 64 + 16) * bs);
  detail::Rng rng(shape.seed);

  JournalSuperblock cur = sb;
  const std::uint64_t sb_block_offset = sb_offset / bs * bs;
  auto superblock = [&](std::uint32_t start, std::uint32_t sequence) {
    cur.start = start;
    cur.sequence = sequence;
    const std::uint64_t at = s.arena.size();
    s.arena.insert(s.arena.end(), sb_block.begin(), sb_block.end());
    encode_journal_superblock(cur, std::span<std::uint8_t, kSuperblockSize>(s.arena.data() + at + sb_offset % bs,
                                                                             kSuperblockSize));
    s.writes.push_back(JournalWrite{sb_block_offset, at, true});
    ++s.superblock_writes;
  };

  std::uint32_t tid = shape.first_tid;
  LogBuilder log(sb, format.first, tid);
  superblock(format.first, tid);  // the mount's first commit

  struct Live {
    std::uint32_t first_block, tid, blocks;
  };
  std::deque<Live> live;  // transactions the tail still covers, oldest first
  std::uint64_t used = 0;
  std::vector<std::uint8_t> content(bs);
  std::uint64_t written = 0;
  std::uint64_t seconds = 1700000000;
  while (written < total) {
    // The mix: mostly a few blocks (an inode, a bitmap, a group descriptor,
    // a directory block), sometimes dozens.
    const std::uint64_t pick = rng.below(100);
    const std::uint32_t n = static_cast<std::uint32_t>(pick < 60 ? 1 + rng.below(8)
                                                       : pick < 90 ? 9 + rng.below(24)
                                                                   : 33 + rng.below(32));
    const bool revokes = rng.below(100) < 20;
    // A checkpoint before the log would pass half full: the tail moves on.
    if (used + n + 4 > len / 2) {
      while (!live.empty() && used > len / 4) {
        used -= live.front().blocks;
        live.pop_front();
      }
      if (live.empty()) superblock(log.head(), log.next_tid());
      else superblock(live.front().first_block, live.front().tid);
    }
    if (revokes) {
      const std::uint64_t r = 1 + rng.below(16);
      for (std::uint64_t i = 0; i < r; ++i) log.revoke(rng.below(shape.target_blocks));
      s.revoked += r;
    }
    for (std::uint32_t i = 0; i < n; ++i) {
      auto* words = reinterpret_cast<std::uint64_t*>(content.data());
      for (std::size_t k = 0; k < bs / 8; ++k) {
        const std::uint64_t v = rng.next();
        std::memcpy(&words[k], &v, 8);
      }
      if (rng.below(200) == 0) {  // begins with the magic: logged escaped
        fscore::store_be<std::uint32_t>(content.data(), kMagic);
        ++s.escaped_blocks;
      } else if (fscore::load_be<std::uint32_t>(content.data()) == kMagic) {
        content[0] ^= 1;
      }
      log.log(rng.below(shape.target_blocks), content);
    }
    const std::uint32_t first_block = log.head();
    seconds += 5;  // jbd2's default commit interval
    const std::size_t blocks = log.commit(seconds, static_cast<std::uint32_t>(rng.below(1000000000)));
    for (const LogBlockWrite& b : log.blocks()) {
      const std::uint64_t at = s.arena.size();
      s.arena.insert(s.arena.end(), b.bytes.begin(), b.bytes.end());
      s.writes.push_back(JournalWrite{std::uint64_t{b.log_block} * bs, at, false});
    }
    log.blocks().clear();
    live.push_back(Live{first_block, tid, static_cast<std::uint32_t>(blocks)});
    used += blocks;
    written += blocks;
    ++tid;
    ++s.transactions;
    s.logged_blocks += n;
    s.log_blocks += blocks;
  }
  superblock(0, tid);  // clean unmount: nothing to recover
  return s;
}

}  // namespace nvj::bench
