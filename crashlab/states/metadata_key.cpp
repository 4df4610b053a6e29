// SPDX-License-Identifier: BSD-3-Clause
#include "crashlab/states/metadata_key.h"

#include <algorithm>
#include <stdexcept>

#include "crashlab/reports/block_meaning.h"
#include "fscore/ext4/block_owners.h"
#include "fscore/ext4/journal_replay.h"

namespace crashlab {

namespace {

using Ranges = std::vector<std::pair<std::uint64_t, std::uint64_t>>;

// Adds the blocks of `owners` that are neither a regular file's data, nor
// free, nor the internal journal's.
void add_metadata(const fscore::ext4::BlockOwners& owners, std::uint64_t block_size, Ranges& out) {
  for (const fscore::ext4::BlockOwner& o : owners.owners())
    if (o.kind != fscore::ext4::BlockKind::file && o.kind != fscore::ext4::BlockKind::journal)
      out.emplace_back(o.start * block_size, (o.start + o.count) * block_size);
}

Ranges joined(Ranges ranges, std::uint64_t size) {
  std::sort(ranges.begin(), ranges.end());
  Ranges out;
  for (auto [start, end] : ranges) {
    end = std::min(end, size);
    if (start >= end) continue;
    if (!out.empty() && start <= out.back().second)
      out.back().second = std::max(out.back().second, end);
    else
      out.emplace_back(start, end);
  }
  return out;
}

}  // namespace

MetadataKeys::MetadataKeys(const RecordingIndex& index) {
  const BlockMeanings first(index, 0), last(index, index.end());
  data_ = first.data_export();
  const std::uint64_t size = index.exports().at(data_).size;
  ranges_ = {{0, size}};
  const fscore::ext4::BlockOwners* a = first.owners();
  const fscore::ext4::BlockOwners* b = last.owners();
  if (a == nullptr || b == nullptr || a->info().block_size != b->info().block_size) return;
  if (a->info().journal == fscore::ext4::JournalKind::kNone || b->info().journal == fscore::ext4::JournalKind::kNone) return;

  // The journal, where the recording starts (it does not move).
  CrashImage image(index);
  image.set_state({});
  const std::optional<std::uint8_t> device = image.find("journal");
  const bool external = a->info().journal == fscore::ext4::JournalKind::kExternal;
  if (external && !device) return;
  Log log;
  std::uint64_t journal_super = 0;  // the internal journal's superblock, in bytes of the data export
  try {
    const fscore::ext4::LocatedJournal where =
        fscore::ext4::locate_journal(image.exported(data_), external ? &image.exported(*device) : nullptr);
    if (external) {
      log.device = *device;
      log.block_size = where.super.block_size;
      log.head = where.superblock_offset + where.super.block_size;
    } else {
      log.device = data_;
      log.block_size = where.fs.block_size;
      for (const auto& run : where.runs) log.runs.emplace_back(run.first_block, run.count);
      journal_super = where.superblock_offset;
    }
  } catch (const std::runtime_error&) {
    return;  // every export whole
  }

  const std::uint64_t bs = a->info().block_size;
  Ranges ranges;
  add_metadata(*a, bs, ranges);
  add_metadata(*b, bs, ranges);
  for (const std::uint64_t home : last.logged_homes()) ranges.emplace_back(home * bs, (home + 1) * bs);
  if (!external) ranges.emplace_back(journal_super / bs * bs, (journal_super / bs + 1) * bs);
  ranges_ = joined(std::move(ranges), size);
  block_size_ = bs;
  journal_ = std::move(log);
}

std::optional<std::uint64_t> MetadataKeys::log_offset(std::uint32_t block) const {
  if (journal_->runs.empty()) return std::uint64_t{block} * journal_->block_size;
  std::uint64_t at = 0;
  for (const auto& [start, count] : journal_->runs) {
    if (block < at + count) return (start + (block - at)) * journal_->block_size;
    at += count;
  }
  return std::nullopt;
}

std::vector<std::uint64_t> MetadataKeys::key(CrashImage& image, const StateVerdict& verdict) const {
  std::vector<std::uint64_t> key;
  const fscore::ext4::ReplayReport* r = journal_ && verdict.replay ? &*verdict.replay : nullptr;
  // What the replay wrote: its words for the superblocks, and each block
  // written home (where, and a copy of which log block's bytes). The time
  // it stamps is one for the whole check.
  key.push_back(verdict.journal_wiped);
  key.push_back(r != nullptr);
  std::vector<std::uint64_t> homes;
  if (r != nullptr) {
    key.insert(key.end(), {r->needed, r->new_sequence, r->kbytes_added, static_cast<std::uint64_t>(r->result.error),
                           r->scan.failed_commit.value_or(0), r->scan.failed_commit.has_value(),
                           r->result.written.size()});
    const auto& log = image.exported(journal_->device);
    for (std::size_t i = 0; i < r->result.written.size(); ++i) {
      const auto [block, escaped] = r->result.sources.at(i);
      key.insert(key.end(), {r->result.written[i], escaped});
      const std::optional<std::uint64_t> at = log_offset(block);
      if (!at) {
        key.push_back(~std::uint64_t{0} - block);
        continue;
      }
      log.state_identity(*at, journal_->block_size, key);
    }
    homes = r->result.written;
    std::sort(homes.begin(), homes.end());
    homes.erase(std::unique(homes.begin(), homes.end()), homes.end());
  }
  // The rest of the metadata as the state held it.
  for (std::size_t d = 0; d < image.count(); ++d) {
    const auto& e = image.exported(static_cast<std::uint8_t>(d));
    key.push_back(d);
    if (!journal_) {
      e.state_identity(0, e.size(), key);
    } else if (d == data_) {
      const std::uint64_t bs = block_size_;
      auto home = homes.begin();
      for (const auto& [start, end] : ranges_) {
        std::uint64_t at = start;
        home = std::lower_bound(home, homes.end(), start / bs);
        for (; home != homes.end() && *home * bs < end; ++home) {
          if (*home * bs > at) e.state_identity(at, *home * bs - at, key);
          at = std::max(at, (*home + 1) * bs);
        }
        if (at < end) e.state_identity(at, end - at, key);
      }
    } else if (d == journal_->device) {
      e.state_identity(0, std::min(journal_->head, e.size()), key);
    } else {
      e.state_identity(0, e.size(), key);
    }
  }
  return key;
}

}  // namespace crashlab
