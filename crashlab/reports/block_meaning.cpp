// SPDX-License-Identifier: BSD-3-Clause
#include "crashlab/reports/block_meaning.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <stdexcept>

#include "crashlab/states/crash_image.h"
#include "fscore/endian.h"
#include "fscore/ext4/features.h"
#include "fscore/ext4/image_reader.h"
#include "fscore/ext4/journal_replay.h"
#include "fscore/jbd2/journal_superblock.h"
#include "fscore/xfs/log_record.h"
#include "fscore/xfs/superblock.h"

namespace crashlab {
namespace {

using fscore::ext4::BlockKind;
using fscore::ext4::BlockOwner;

// One block's meaning: runs of pieces with the same head and `unit`
// whose numbers follow on merge into one line ("file blocks 0-3"); items
// add up ("logs: 1061 ...; 1025 ...").
struct Piece {
  std::string head;
  std::string unit;  // "block", "inodes", "log block"; "": no numbers
  std::uint64_t first = 0, last = 0;
  std::vector<std::string> items;
  std::uint64_t times = 1;   // without a unit: how many blocks in a row say the same
  std::uint64_t from = 0, to = 0;  // the bytes of the export it covers
};

constexpr std::size_t kMostItems = 6;

std::string range(const std::string& unit, std::uint64_t first, std::uint64_t last) {
  if (unit == "inodes") return first == last ? "inode " + std::to_string(first) : "inodes " + std::to_string(first) + "-" + std::to_string(last);
  if (first == last) return unit + " " + std::to_string(first);
  return unit + "s " + std::to_string(first) + "-" + std::to_string(last);
}

std::vector<BlockMeanings::Meaning> meanings_of(const std::vector<Piece>& pieces) {
  std::vector<Piece> runs;
  for (const Piece& p : pieces) {
    Piece* r = runs.empty() ? nullptr : &runs.back();
    const bool joins = r != nullptr && r->to == p.from && r->head == p.head && r->unit == p.unit &&
                       (p.unit.empty() ? p.items.empty() == r->items.empty() : p.first == r->last + 1);
    if (!joins) {
      runs.push_back(p);
      continue;
    }
    r->last = p.last;
    r->to = p.to;
    r->times += p.times;
    r->items.insert(r->items.end(), p.items.begin(), p.items.end());
  }
  std::vector<BlockMeanings::Meaning> out;
  for (const Piece& r : runs) {
    std::string line = r.head;
    if (!r.unit.empty()) line += ", " + range(r.unit, r.first, r.last);
    if (r.unit.empty() && r.times > 1) line += " (x" + std::to_string(r.times) + ")";
    if (!r.items.empty()) {
      line += ": ";
      for (std::size_t i = 0; i < r.items.size() && i < kMostItems; ++i) line += (i == 0 ? "" : "; ") + r.items[i];
      if (r.items.size() > kMostItems) line += "; and " + std::to_string(r.items.size() - kMostItems) + " more";
    }
    out.push_back({r.from, r.to - r.from, line});
  }
  return out;
}

// XFS's on-disk magic numbers (xfs_format.h, xfs_da_format.h), big-endian
// at the start of a block, or of each inode.
struct XfsMagic {
  std::uint32_t magic;
  const char* what;
};
constexpr XfsMagic kXfsMagic32[] = {
    {0x58465342, "XFS superblock"},        {0x58414746, "AGF (free space header)"},
    {0x58414749, "AGI (inode header)"},    {0x5841464c, "AGFL (free list)"},
    {0x41425442, "free space B+tree block (by block)"}, {0x41423342, "free space B+tree block (by block)"},
    {0x41425443, "free space B+tree block (by size)"},  {0x41423343, "free space B+tree block (by size)"},
    {0x49414254, "inode B+tree block"},    {0x49414233, "inode B+tree block"},
    {0x46494233, "free inode B+tree block"}, {0x424d4150, "file extent B+tree block"},
    {0x424d4133, "file extent B+tree block"}, {0x524d4233, "reverse mapping B+tree block"},
    {0x52334643, "reference count B+tree block"}, {0x58444232, "directory block"},
    {0x58444233, "directory block"},       {0x58444432, "directory data block"},
    {0x58444433, "directory data block"},  {0x58444632, "directory free space block"},
    {0x58444633, "directory free space block"}, {0x58534c4d, "symlink block"},
    {0xfeedbabe, "log record header"},
};
// The 16-bit ones, at byte 8 of a dir/attr block's info (v5: "da3" headers).
constexpr XfsMagic kXfsMagic16At8[] = {
    {0x3df1, "directory leaf block"}, {0x3dff, "directory leaf (node) block"}, {0x3ebe, "directory or attribute node block"},
    {0x3bee, "attribute leaf block"}, {0xd2f1, "directory leaf block"},        {0xd2ff, "directory leaf (node) block"},
    {0xfebe, "directory or attribute node block"}, {0xfbee, "attribute leaf block"},
};

}  // namespace

BlockMeanings::BlockMeanings(const RecordingIndex& index, std::uint64_t end) : index_(index) {
  CrashImage image(index);
  image.advance(end);
  std::vector<std::size_t> sent;
  for (std::size_t i = 0; i < index.changes().size(); ++i) {
    const IndexedChange& c = index.changes()[i];
    if (c.sequence <= end && (c.durable == kNever || c.durable > end)) sent.push_back(i);
  }
  image.set_state(sent);
  data_ = image.find("data").value_or(0);
  journal_export_ = image.find("journal");
  const auto& data = image.exported(data_);
  const fscore::FsSignature sig = fscore::identify_filesystem(data);
  kind_ = sig.kind;
  std::string at = "as it is after frame " + std::to_string(end);
  if (kind_ == fscore::FsKind::ext4) {
    // As a mount right then would find it: its journal replayed first, so
    // that the blocks a committed transaction gave a file are the file's.
    try {
      auto& data_sink = image.exported(data_);
      fscore::ext4::ImageAccess fs{data_sink, data_sink};
      std::optional<fscore::ext4::ImageAccess> log;
      if (journal_export_ && fscore::ext4::read_image(data_sink).journal == fscore::ext4::JournalKind::kExternal) log.emplace(fscore::ext4::ImageAccess{image.exported(*journal_export_), image.exported(*journal_export_)});
      if (fscore::ext4::replay_journal_like_e2fsck(fs, log ? &*log : nullptr, 0).needed) at += ", its journal replayed";
    } catch (const std::runtime_error& e) {
      at += std::string(" (its journal does not replay: ") + e.what() + ")";
    }
    try {
      owners_ = std::make_unique<fscore::ext4::BlockOwners>(fscore::ext4::BlockOwners::read(data));
      const fscore::ext4::ImageInfo& info = owners_->info();
      block_size_ = info.block_size;
      summary_ = "ext4, " + std::to_string(block_size_ >> 10) + " KiB blocks";
      if (info.journal == fscore::ext4::JournalKind::kInternal) {
        Journal j;
        j.device = data_;
        j.format = fscore::jbd2::LogFormat::from(info.journal_super);
        for (const auto& run : info.journal_runs) j.runs.emplace_back(run.start, run.count);
        journal_ = j;
        summary_ += ", its journal inside";
      } else if (info.journal == fscore::ext4::JournalKind::kExternal && journal_export_) {
        const fscore::ext4::ImageInfo device = fscore::ext4::read_image(image.exported(*journal_export_));
        Journal j;
        j.device = *journal_export_;
        j.format = fscore::jbd2::LogFormat::from(device.journal_super);
        journal_ = j;
        summary_ += ", its journal on export " + index.exports()[*journal_export_].name;
      }
      if (journal_)
        summary_ += std::string(" (jbd2, ") + std::to_string(journal_->format.block_size >> 10) + " KiB blocks" +
                    (journal_->format.csum_v3 ? ", csum v3" : journal_->format.csum_v2 ? ", csum v2" : "") +
                    (journal_->format.async_commit ? ", async commit" : "") + ")";
      summary_ += "; its blocks read " + at;
    } catch (const std::runtime_error& e) {
      owners_.reset();
      journal_.reset();
      summary_ = std::string("ext4 that does not read ") + at + " (" + e.what() + "): blocks by their contents only";
    }
  } else if (kind_ == fscore::FsKind::xfs) {
    std::array<std::uint8_t, 8> head{};
    data.read(0, head);
    block_size_ = fscore::load_be<std::uint32_t>(head.data() + 4);
    if (block_size_ < 512 || block_size_ > 65536) block_size_ = 4096;
    summary_ = "XFS, " + std::to_string(block_size_) + "-byte blocks";
    try {
      if (const auto log = fscore::xfs::locate_log(data); log && !log->external) {
        xfs_log_ = std::make_pair(log->offset, log->offset + log->length);
        summary_ += ", its log inside";
      } else if (journal_export_) {
        summary_ += ", its log on export " + index.exports()[*journal_export_].name;
      }
    } catch (const std::runtime_error&) {
      summary_ += ", its log not found";
    }
    summary_ += "; blocks named by their magic numbers";
  } else if (kind_ == fscore::FsKind::btrfs) {
    summary_ = "btrfs (its blocks are not read: exports and ranges only)";
  } else {
    summary_ = "no filesystem the lab reads " + at + " (exports and ranges only)";
  }
  if (journal_) scan_descriptors(index);
}

std::optional<std::uint64_t> BlockMeanings::log_block(std::uint8_t device, std::uint64_t offset) const {
  if (!journal_ || device != journal_->device) return std::nullopt;
  const std::uint64_t bs = journal_->format.block_size;
  if (journal_->runs.empty()) return offset / bs;
  const std::uint64_t block = offset / block_size_;
  std::uint64_t log = 0;
  for (const auto& [first, count] : journal_->runs) {
    if (block >= first && block < first + count) return ((block - first) * block_size_ + log * bs) / bs;
    log += count * block_size_ / bs;
  }
  return std::nullopt;
}

void BlockMeanings::scan_descriptors(const RecordingIndex& index) {
  const fscore::jbd2::LogFormat& f = journal_->format;
  const std::uint64_t bs = f.block_size;
  for (const IndexedChange& c : index.changes()) {
    if (c.kind != FrameKind::write || c.device != journal_->device) continue;
    for (std::uint64_t at = (bs - c.offset % bs) % bs; at + bs <= c.data.size(); at += bs) {
      const auto block = c.data.subspan(at, bs);
      const auto header = fscore::jbd2::read_block_header(block);
      if (!header || header->type != static_cast<std::uint32_t>(fscore::jbd2::BlockType::kDescriptor)) continue;
      const auto log = log_block(c.device, c.offset + at);
      if (!log) continue;
      std::vector<fscore::jbd2::Tag> tags;
      fscore::jbd2::parse_descriptor_tags(f, block, tags);
      std::uint64_t next = *log;
      for (const auto& tag : tags) {
        next = next + 1 >= f.last && f.last > f.first ? f.first : next + 1;  // the log wraps
        journal_->tagged[next].push_back({c.sequence, header->sequence, tag.target});
      }
    }
  }
}

std::vector<std::uint64_t> BlockMeanings::logged_homes() const {
  std::vector<std::uint64_t> homes;
  if (journal_)
    for (const auto& [log, tags] : journal_->tagged)
      for (const Logged& l : tags) homes.push_back(l.target);
  std::sort(homes.begin(), homes.end());
  homes.erase(std::unique(homes.begin(), homes.end()), homes.end());
  return homes;
}

std::string BlockMeanings::owner_label(const BlockOwner& o, std::uint64_t block) const {
  const std::uint64_t nth = block - o.start;
  switch (o.kind) {
    case BlockKind::inode_table: {
      const std::uint64_t per = block_size_ / owners_->info().super.inode_size;
      const std::uint64_t first = o.ino + nth * per;
      return "inode table of group " + std::to_string(o.group) + ", inodes " + std::to_string(first) + "-" +
             std::to_string(first + per - 1);
    }
    case BlockKind::file:
    case BlockKind::directory:
    case BlockKind::symlink:
      return std::string(to_string(o.kind)) + " of " + owner_name(o.ino) + (o.unwritten ? " (unwritten)" : "") +
             ", block " + std::to_string(o.file_block + nth);
    case BlockKind::extent_tree:
    case BlockKind::block_map:
    case BlockKind::xattr:
    case BlockKind::other: return std::string(to_string(o.kind)) + " of " + owner_name(o.ino);
    case BlockKind::journal: return "journal, log block " + std::to_string(o.file_block + nth);
    default: return std::string(to_string(o.kind)) + (o.group == 0 ? "" : " of group " + std::to_string(o.group));
  }
}

std::string BlockMeanings::home_block(std::uint64_t block) const {
  const std::string b = "block " + std::to_string(block);
  if (!owners_) return b;
  const BlockOwner* o = owners_->find(block);
  return b + " (" + (o == nullptr ? std::string("no owner") : owner_label(*o, block)) + ")";
}

std::string BlockMeanings::journal_block(std::uint64_t log, std::span<const std::uint8_t> bytes,
                                         std::uint64_t sequence) const {
  using fscore::jbd2::BlockType;
  const fscore::jbd2::LogFormat& f = journal_->format;
  if (const auto h = fscore::jbd2::read_block_header(bytes)) {
    const std::string tid = ", tid " + std::to_string(h->sequence);
    switch (static_cast<BlockType>(h->type)) {
      case BlockType::kDescriptor: {
        std::vector<fscore::jbd2::Tag> tags;
        fscore::jbd2::parse_descriptor_tags(f, bytes, tags);
        std::string targets;
        for (std::size_t i = 0; i < tags.size() && i < kMostItems; ++i)
          targets += (i == 0 ? "" : ", ") + std::to_string(tags[i].target);
        if (tags.size() > kMostItems) targets += ", ...";
        return "jbd2 descriptor" + tid + ": tags " + std::to_string(tags.size()) + " blocks (" + targets + ")";
      }
      case BlockType::kCommit: return "jbd2 commit block" + tid;
      case BlockType::kRevoke: {
        std::vector<std::uint64_t> revoked;
        fscore::jbd2::parse_revoke_records(f, bytes, revoked);
        return "jbd2 revoke block" + tid + ": revokes " + std::to_string(revoked.size()) + " blocks";
      }
      case BlockType::kFastCommit: return "jbd2 fast commit block" + tid;
      case BlockType::kSuperblockV1:
      case BlockType::kSuperblockV2:
        if (bytes.size() >= fscore::jbd2::kSuperblockSize) {
          try {
            const auto sb = fscore::jbd2::decode_journal_superblock(bytes.first<fscore::jbd2::kSuperblockSize>());
            return "jbd2 superblock: " +
                   (sb.start == 0 ? std::string("clean (start 0)")
                                  : "start " + std::to_string(sb.start) + ", sequence " + std::to_string(sb.sequence)) +
                   (sb.errno_value != 0 ? ", errno " + std::to_string(sb.errno_value) : "");
          } catch (const std::runtime_error& e) {
            return std::string("jbd2 superblock that does not read (") + e.what() + ")";
          }
        }
        return "jbd2 superblock";
    }
  }
  const auto it = journal_->tagged.find(log);
  if (it == journal_->tagged.end()) return "";  // nothing tags it: the caller says where it is
  const Logged* nearest = &it->second.front();
  for (const Logged& l : it->second) {
    const auto distance = [&](const Logged& x) { return x.sequence > sequence ? x.sequence - sequence : sequence - x.sequence; };
    if (distance(l) < distance(*nearest)) nearest = &l;
  }
  return "tid " + std::to_string(nearest->tid) + " logs a copy of " + home_block(nearest->target);
}

std::string BlockMeanings::xfs_block(std::span<const std::uint8_t> bytes, bool log) const {
  if (bytes.size() < 12) return "";
  const std::uint32_t magic = fscore::load_be<std::uint32_t>(bytes.data());
  if (log) {
    if (const auto h = fscore::xfs::parse_record_header(bytes))
      return "XFS log record header: cycle " + std::to_string(h->cycle) + ", LSN " + fscore::xfs::to_string(h->lsn) + ", " +
             std::to_string(h->len) + " bytes";
    return "XFS log record data";
  }
  for (const XfsMagic& m : kXfsMagic32)
    if (m.magic == magic) return std::string("XFS ") + m.what;
  if (fscore::load_be<std::uint16_t>(bytes.data()) == 0x494e) return "XFS inodes";  // "IN", each inode's magic
  for (const XfsMagic& m : kXfsMagic16At8)
    if (m.magic == fscore::load_be<std::uint16_t>(bytes.data() + 8)) return std::string("XFS ") + m.what;
  return "";
}

std::string BlockMeanings::owner_name(std::uint32_t ino) const {
  const auto path = owners_->path_of(ino);
  if (!path) return "inode " + std::to_string(ino);
  return (path->empty() ? std::string("/") : *path) + " (inode " + std::to_string(ino) + ")";
}

std::vector<BlockMeanings::Meaning> BlockMeanings::of(std::size_t i) const {
  const IndexedChange& c = index_.changes().at(i);
  const std::uint64_t end = c.offset + c.length;
  std::vector<Piece> pieces;
  // A piece for the unit of `unit` bytes at `at`, clipped to the change.
  const auto add = [&](Piece p, std::uint64_t at, std::uint64_t unit) {
    p.from = std::max(at, c.offset);
    p.to = std::min(at + unit, end);
    pieces.push_back(std::move(p));
  };
  const auto bytes_at = [&](std::uint64_t offset, std::uint64_t length) -> std::span<const std::uint8_t> {
    if (c.kind != FrameKind::write || offset < c.offset || offset + length > c.offset + c.data.size()) return {};
    return c.data.subspan(offset - c.offset, length);
  };
  // A journal block: what it holds, else where it is in the log.
  const auto journal_piece = [&](std::uint64_t log, std::uint64_t at, std::uint64_t bs, const char* where) {
    const auto bytes = bytes_at(at, bs);
    const std::string what = bytes.empty() || !journal_ ? "" : journal_block(log, bytes, c.sequence);
    if (what.empty())
      add(Piece{where, "log block", log, log, {}}, at, bs);
    else
      add(Piece{"journal log block " + std::to_string(log) + ": " + what, "", 0, 0, {}}, at, bs);
  };
  if (journal_ && c.device == journal_->device && journal_->runs.empty()) {
    const std::uint64_t bs = journal_->format.block_size;
    for (std::uint64_t at = c.offset - c.offset % bs; at < end; at += bs) journal_piece(at / bs, at, bs, "journal");
    return meanings_of(pieces);
  }
  if (kind_ == fscore::FsKind::ext4 && owners_ && c.device == data_) {
    const std::uint64_t bs = block_size_;
    for (std::uint64_t block = c.offset / bs; block * bs < end; ++block) {
      const std::uint64_t at = block * bs;
      const BlockOwner* o = owners_->find(block);
      if (o == nullptr) {
        add(Piece{"no owner (free when read)", "block", block, block, {}}, at, bs);
        continue;
      }
      const std::uint64_t nth = block - o->start;
      switch (o->kind) {
        case BlockKind::journal:
          journal_piece(o->file_block + nth, at, bs, "journal (inside)");
          break;
        case BlockKind::inode_table: {
          const std::uint64_t per = bs / owners_->info().super.inode_size;
          const std::uint64_t first = o->ino + nth * per;
          Piece p{"inode table of group " + std::to_string(o->group), "inodes", first, first + per - 1, {}};
          for (std::uint64_t n = first; n < first + per; ++n)
            if (const auto path = owners_->path_of(static_cast<std::uint32_t>(n)))
              p.items.push_back(std::to_string(n) + " " + (path->empty() ? "/" : *path));
          add(p, at, bs);
          break;
        }
        case BlockKind::file:
        case BlockKind::directory:
        case BlockKind::symlink:
          add(Piece{std::string(to_string(o->kind)) + " of " + owner_name(o->ino) + (o->unwritten ? " (unwritten)" : ""),
                    "block", o->file_block + nth, o->file_block + nth, {}},
              at, bs);
          break;
        default:
          add(Piece{owner_label(*o, block), "", 0, 0, {}}, at, bs);
      }
    }
    return meanings_of(pieces);
  }
  if (kind_ == fscore::FsKind::xfs && (c.device == data_ || (journal_export_ && c.device == *journal_export_))) {
    const bool on_log_device = c.device != data_;
    // The log in 512-byte basic blocks, everything else in filesystem blocks.
    for (std::uint64_t next = c.offset; next < end;) {
      const bool log = on_log_device || (xfs_log_ && next >= xfs_log_->first && next < xfs_log_->second);
      const std::uint64_t step = log ? 512 : block_size_;
      const std::uint64_t at = next - next % step;
      const auto bytes = bytes_at(at, std::min<std::uint64_t>(step, end - at));
      std::string what = bytes.empty() ? "" : xfs_block(bytes, log);
      if (what.empty()) what = log ? "XFS log" : "XFS data or unnamed metadata";
      add(Piece{what, "", 0, 0, {}}, at, step);
      next = at + step;
    }
    return meanings_of(pieces);
  }
  if (c.length != 0)
    add(Piece{index_.exports().at(c.device).name, "sector", c.offset / 512, (end - 1) / 512, {}}, c.offset, c.length);
  return meanings_of(pieces);
}

}  // namespace crashlab
