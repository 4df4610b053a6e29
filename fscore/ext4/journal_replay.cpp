// SPDX-License-Identifier: BSD-3-Clause
#include "fscore/ext4/journal_replay.h"

#include <algorithm>
#include <array>
#include <map>
#include <stdexcept>

#include "fscore/crc32c.h"
#include "fscore/endian.h"
#include "fscore/ext4/features.h"
#include "fscore/ext4/superblock.h"

namespace fscore::ext4 {
namespace {

// Journal superblock fields.
constexpr std::size_t kJSequence = 0x18, kJStart = 0x1C, kJChecksum = 0xFC;

[[noreturn]] void replay_failed(const std::string& what) { throw std::runtime_error(what); }

// e2fsck's unix I/O cache on the filesystem device: 8 blocks, least
// recently used out first, dirty blocks written (and counted in
// s_kbytes_written) when they leave it or at a flush.
class WriteBackCache final : public jbd2::RecoveryTrace {
 public:
  // `log` null: an external journal (its reads use another cache). With
  // `root` of an extent tree deeper than the inode, each read first walks
  // the tree as ext2fs_bmap2() does, one block per level.
  WriteBackCache(const jbd2::JournalLog* log, const std::array<std::uint8_t, 60>* root, const BlockSource* fs,
                 std::uint32_t block_size)
      : log_(log), root_(root), fs_(fs), block_size_(block_size) {}
  void touch(std::uint64_t block, bool write) {
    auto it = std::find_if(lru_.begin(), lru_.end(), [&](const Entry& e) { return e.block == block; });
    if (it != lru_.end()) {
      Entry e = *it;
      lru_.erase(it);
      e.dirty = e.dirty || write;
      lru_.push_back(e);
      return;
    }
    if (lru_.size() == kBlocks) {
      if (lru_.front().dirty) ++written_;
      lru_.erase(lru_.begin());
    }
    lru_.push_back(Entry{block, write});
  }
  std::uint64_t flush() {
    for (Entry& e : lru_) {
      if (e.dirty) ++written_;
      e.dirty = false;
    }
    return written_;
  }
  // An internal journal's blocks are read through the filesystem's cache.
  void read(std::uint32_t log_block) override {
    if (log_ == nullptr) return;
    walk_tree(log_block);
    try {
      touch(log_->device_offset(log_block) / block_size_, false);
    } catch (const std::runtime_error&) {
      // Not mapped: recovery's own read fails and counts nothing.
    }
  }
  void wrote(std::uint64_t home_block) override { touch(home_block, true); }
  bool tree_has_index() const { return root_ != nullptr && load_le<std::uint16_t>(root_->data() + 6) > 0; }

 private:
  // Extent node: header (magic, entries, max, depth) then 12-byte entries;
  // an index entry is ei_block, ei_leaf_lo, ei_leaf_hi.
  void walk_tree(std::uint32_t logical) {
    if (!tree_has_index()) return;
    std::span<const std::uint8_t> node(root_->data(), root_->size());
    for (int level = 0; level < 8; ++level) {
      if (node.size() < 12 || load_le<std::uint16_t>(node.data()) != 0xF30A) return;
      const std::uint16_t entries = load_le<std::uint16_t>(node.data() + 2);
      if (load_le<std::uint16_t>(node.data() + 6) == 0 || entries == 0) return;
      std::size_t pick = 0;
      for (std::size_t i = 1; i < entries && 12 + 12 * (i + 1) <= node.size(); ++i)
        if (load_le<std::uint32_t>(node.data() + 12 + 12 * i) <= logical) pick = i;
      const std::uint8_t* e = node.data() + 12 + 12 * pick;
      const std::uint64_t child = load_le<std::uint32_t>(e + 4) | std::uint64_t{load_le<std::uint16_t>(e + 8)} << 32;
      touch(child, false);
      auto [it, added] = nodes_.try_emplace(child);
      if (added) {
        it->second.resize(block_size_);
        if ((child + 1) * block_size_ > fs_->size()) return;
        fs_->read(child * block_size_, it->second);
      }
      node = it->second;
    }
  }

  static constexpr std::size_t kBlocks = 8;
  struct Entry {
    std::uint64_t block;
    bool dirty;
  };
  const jbd2::JournalLog* log_;
  const std::array<std::uint8_t, 60>* root_;
  const BlockSource* fs_;
  std::uint32_t block_size_;
  std::map<std::uint64_t, std::vector<std::uint8_t>> nodes_;
  std::vector<Entry> lru_;
  std::uint64_t written_ = 0;
};

std::array<std::uint8_t, 1024> read_1k(const BlockSource& source, std::uint64_t offset) {
  std::array<std::uint8_t, 1024> bytes{};
  source.read(offset, bytes);
  return bytes;
}

}  // namespace

LocatedJournal locate_journal(const BlockSource& fs, const BlockSource* journal_device) {
  LocatedJournal j;
  j.fs = read_image(fs);
  if (j.fs.journal_device) replay_failed("this is a journal device: give the filesystem, and this with --journal");
  const std::uint32_t bs = j.fs.block_size;
  switch (j.fs.journal) {
    case JournalKind::kNone:
      replay_failed("the filesystem has no journal");
    case JournalKind::kInternal:
      j.super = j.fs.journal_super;
      j.superblock_offset = j.fs.journal_superblock_block * bs;
      for (const BlockRun& r : j.fs.journal_runs) j.runs.push_back(jbd2::LogRun{r.start, r.count});
      return j;
    case JournalKind::kExternal:
      break;
  }
  if (journal_device == nullptr)
    replay_failed("the journal is external (uuid " + format_uuid(j.fs.super.journal_uuid) + "): give its device with --journal");
  j.device = read_image(*journal_device);
  if (!j.device->journal_device) replay_failed("the --journal image is not a journal device");
  if (j.device->super.uuid != j.fs.super.journal_uuid)
    replay_failed("the --journal device has uuid " + format_uuid(j.device->super.uuid) + ", the filesystem's journal is " +
         format_uuid(j.fs.super.journal_uuid));
  if (j.device->block_size != bs) replay_failed("the journal device's block size differs from the filesystem's");
  j.super = j.device->journal_super;
  j.superblock_offset = j.device->journal_superblock_block * bs;
  return j;
}

ReplayReport replay_journal_like_e2fsck(ImageAccess fs, ImageAccess* journal, std::uint32_t now,
                                        const jbd2::RecoveryRules& rules) {
  const LocatedJournal where = locate_journal(fs.source, journal != nullptr ? &journal->source : nullptr);
  const std::uint32_t bs = where.fs.block_size;
  const bool internal = where.fs.journal == JournalKind::kInternal;
  ImageAccess& jdev = internal ? fs : *journal;
  ReplayReport report;
  const bool recover_flag = (where.fs.super.feature_incompat & incompat::kRecover) != 0;
  report.needed = recover_flag || where.super.start != 0;
  if (!report.needed) return report;

  // e2fsck's first look at the journal rewrites its superblock unchanged: on
  // an internal journal, a write through the filesystem's cache.
  const std::uint64_t jsb_block = where.superblock_offset / bs;
  const jbd2::JournalLog log(jdev.source, bs, where.super.maxlen, where.runs);
  WriteBackCache cache(internal ? &log : nullptr,
                       internal && where.fs.journal_extents ? &where.fs.journal_root : nullptr, &fs.source, bs);
  report.block_mapped_journal = internal && !where.fs.journal_extents;
  if (internal) {
    cache.touch(jsb_block, false);
    cache.touch(jsb_block, true);
    cache.touch(jsb_block, false);
  }
  const auto before = read_1k(fs.source, kSuperOffset);

  report.scan = jbd2::scan_journal(log, where.super, &cache, rules);
  report.result = jbd2::replay_journal(log, where.super, report.scan, fs.sink, where.fs.blocks, &cache);
  const std::uint64_t raw_writes = cache.flush();
  const int error = report.result.error;

  // The journal superblock.
  auto jsb = read_1k(jdev.source, where.superblock_offset);
  report.new_sequence = error == 0 ? report.result.next_tid : where.super.sequence;
  store_be<std::uint32_t>(jsb.data() + kJSequence, report.new_sequence);
  store_be<std::uint32_t>(jsb.data() + kJStart, 0);
  if (where.super.has_csum_v2_or_v3()) {
    store_be<std::uint32_t>(jsb.data() + kJChecksum, 0);
    store_be<std::uint32_t>(jsb.data() + kJChecksum, crc32c(~0u, jsb.data(), jsb.size()));
  }
  jdev.sink.write(where.superblock_offset, jsb);

  // The primary superblock, as replayed.
  auto super = read_1k(fs.source, kSuperOffset);
  store_le<std::uint32_t>(super.data() + sb::kWtime, now);
  store_le<std::uint32_t>(super.data() + sb::kFeatureIncompat, load_le<std::uint32_t>(super.data() + sb::kFeatureIncompat) & ~incompat::kRecover);
  std::uint16_t s_state = load_le<std::uint16_t>(super.data() + sb::kState);
  if (error != 0) s_state = static_cast<std::uint16_t>(s_state & ~state::kValidFs);
  if (report.scan.failed_commit) s_state = static_cast<std::uint16_t>(s_state | state::kErrorFs);
  store_le<std::uint16_t>(super.data() + sb::kState, s_state);
  if (load_le<std::uint64_t>(before.data() + sb::kKbytesWritten) != 0) {
    report.kbytes_added = raw_writes * bs / 1024;
    store_le<std::uint64_t>(super.data() + sb::kKbytesWritten,
                            load_le<std::uint64_t>(super.data() + sb::kKbytesWritten) + report.kbytes_added);
  }
  store_le<std::uint16_t>(super.data() + sb::kBlockGroupNr, 0);
  if ((load_le<std::uint32_t>(super.data() + sb::kFeatureRoCompat) & ro_compat::kMetadataCsum) != 0)
    store_le<std::uint32_t>(super.data() + sb::kChecksum, superblock_checksum(super));
  fs.sink.write(kSuperOffset, super);
  report.orphans = load_le<std::uint32_t>(super.data() + sb::kLastOrphan);
  return report;
}

bool wipe_journal_like_the_kernel(ImageAccess fs, ImageAccess* journal) {
  const LocatedJournal where = locate_journal(fs.source, journal != nullptr ? &journal->source : nullptr);
  if (where.super.start == 0) return false;
  ImageAccess& jdev = where.fs.journal == JournalKind::kInternal ? fs : *journal;
  auto jsb = read_1k(jdev.source, where.superblock_offset);
  store_be<std::uint32_t>(jsb.data() + kJStart, 0);
  if (where.super.has_csum_v2_or_v3()) {
    store_be<std::uint32_t>(jsb.data() + kJChecksum, 0);
    store_be<std::uint32_t>(jsb.data() + kJChecksum, crc32c(~0u, jsb.data(), jsb.size()));
  }
  jdev.sink.write(where.superblock_offset, jsb);
  return true;
}

}  // namespace fscore::ext4
