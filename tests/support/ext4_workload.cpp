// SPDX-License-Identifier: BSD-3-Clause
#include "tests/support/ext4_workload.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <set>
#include <stdexcept>

#include "fscore/ext4/features.h"
#include "fscore/ext4/image_builder.h"
#include "fscore/ext4/image_reader.h"
#include "fscore/ext4/journal_device.h"
#include "fscore/ext4/superblock.h"
#include "fscore/ext4/tree_reader.h"
#include "fscore/jbd2/journal_superblock.h"
#include "tests/support/jbd2_log_builder.h"
#include "crashlab/facts/fact.h"
#include "fscore/record/frame_encoder.h"
#include "tests/support/sparse_image.h"

namespace nvj::test {

namespace {

namespace ext4 = fscore::ext4;
namespace jbd2 = fscore::jbd2;
using Bytes = std::vector<std::uint8_t>;

constexpr std::uint32_t kBlock = 4096;
constexpr std::uint64_t kDataBytes = 32u << 20;
constexpr std::uint64_t kJournalBytes = 8u << 20;
constexpr std::uint8_t kData = 0, kJournal = 1;

fscore::Uuid uuid_of(std::uint8_t first) {
  fscore::Uuid u{};
  for (std::size_t i = 0; i < u.size(); ++i) u[i] = static_cast<std::uint8_t>(first + 17 * i);
  return u;
}

ext4::ImageOptions image_options(bool internal) {
  ext4::ImageOptions o;
  o.device_bytes = kDataBytes;
  o.block_size = kBlock;
  o.journal = internal ? ext4::JournalKind::kInternal : ext4::JournalKind::kExternal;
  o.journal_blocks = internal ? 1024 : 0;
  o.external_journal_uuid = uuid_of(40);
  o.uuid = uuid_of(1);
  o.hash_seed = uuid_of(2);
  o.now = {1700000000, 0};
  return o;
}

std::string name_of(unsigned k) {
  std::string name = "f";  // not "f" + ...: GCC 12 at -O3 warns of an overlap that cannot be (-Wrestrict)
  name += std::to_string(k);
  return name;
}

std::uint64_t blocks_of(unsigned k) { return (ext4_workload_file(k).size() + kBlock - 1) / kBlock; }

// The filesystem with files 0 to `count` - 1 in its root, built from
// scratch, and after them a file "pad" of the blocks the workload's files
// still to come will take: ImageBuilder allocates the directories' blocks
// after every file's data, so that with the pad they stay where they are
// from one step to the next, as a kernel's stay (the files' data goes where
// the pad was, and the pad moves on).
std::unique_ptr<SparseImage> build(bool internal, unsigned count, unsigned total, ext4::ImageLayout* layout = nullptr) {
  auto image = std::make_unique<SparseImage>(kDataBytes, kBlock);
  ext4::ImageBuilder b(image_options(internal), image.get());
  ext4::Attributes a;
  a.permissions = 0644;
  a.mtime = a.ctime = a.atime = a.crtime = {1700000000, 0};
  const auto add = [&](const std::string& name, const Bytes& content) {
    const ext4::ByteRange all{0, content.size()};
    b.add_file(ext4::ImageBuilder::kRoot, name, a, content.size(), std::span(&all, 1),
               [&content](std::uint64_t offset, std::span<std::uint8_t> out) {
                 std::copy_n(content.begin() + static_cast<std::ptrdiff_t>(offset), out.size(), out.begin());
               });
  };
  for (unsigned k = 0; k < count; ++k) add(name_of(k), ext4_workload_file(k));
  std::uint64_t pad = 1;
  for (unsigned k = count; k < total; ++k) pad += blocks_of(k);
  add("pad", Bytes(pad * kBlock, 0));
  const ext4::ImageLayout l = b.finish();
  if (layout != nullptr) *layout = l;
  return image;
}

Bytes block_of(const SparseImage& image, std::uint64_t block) {
  Bytes bytes(kBlock);
  image.read(block * kBlock, bytes);
  return bytes;
}

// The blocks that differ between two images.
std::vector<std::uint64_t> changed_blocks(const SparseImage& before, const SparseImage& after) {
  std::set<std::uint64_t> blocks;
  for (const auto& [page, bytes] : before.pages()) blocks.insert(page);
  for (const auto& [page, bytes] : after.pages()) blocks.insert(page);
  std::vector<std::uint64_t> out;
  for (const std::uint64_t b : blocks)
    if (block_of(before, b) != block_of(after, b)) out.push_back(b);
  return out;
}

class Recorder {
 public:
  Recorder(const std::vector<fscore::record::ExportInfo>& exports) { e_.header(out_, exports); }
  void base(std::uint8_t device, const SparseImage& image) {
    for (const auto& [page, bytes] : image.pages()) e_.base(out_, device, page * image.page_size(), bytes.data(), bytes.size());
  }
  // A write acknowledged: durable then (FUA, or NVRAM), or volatile.
  void write(std::uint8_t device, std::uint64_t offset, const Bytes& bytes, bool durable) {
    ++id_;
    e_.write(out_, device, id_, offset, bytes.data(), static_cast<std::uint32_t>(bytes.size()), durable);
    e_.ack(out_, device, id_, durable);
  }
  void flush(std::uint8_t device) {
    ++id_;
    e_.flush(out_, device, id_);
    e_.flush_done(out_, device, id_);
  }
  void mark(const std::string& label) { e_.mark(out_, 0, label); }
  Bytes finish() {
    e_.end(out_);
    return Bytes(out_.data(), out_.data() + out_.size());
  }

 private:
  fscore::record::FrameEncoder e_;
  fscore::record::FrameBuffer out_;
  std::uint64_t id_ = 0;
};

}  // namespace

Bytes ext4_workload_file(unsigned k) {
  Bytes bytes(3000 + 9000 * std::size_t{k});
  std::uint32_t x = 2463534242u + k;
  for (auto& b : bytes) {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    b = static_cast<std::uint8_t>(x);
  }
  return bytes;
}

Ext4Workload record_ext4_workload(const Ext4WorkloadOptions& o) {
  const bool internal = o.internal_journal;
  ext4::ImageLayout layout;
  std::unique_ptr<SparseImage> now = build(internal, 0, o.files, &layout);
  SparseImage journal_device(kJournalBytes, kBlock);
  if (!internal) {
    ext4::JournalDeviceOptions j;
    j.device_bytes = kJournalBytes;
    j.block_size = kBlock;
    j.uuid = uuid_of(40);
    j.hash_seed = uuid_of(41);
    j.now = {1700000000, 0};
    j.users = {uuid_of(1)};
    ext4::build_journal_device(j, journal_device);
  }
  std::vector<fscore::record::ExportInfo> exports{{"data", kDataBytes, 512}};
  if (!internal) exports.push_back({"journal", kJournalBytes, 512});
  Recorder r(exports);
  r.base(kData, *now);
  if (!internal) r.base(kJournal, journal_device);

  // Where a log block lies: (export, device block).
  const ext4::ImageInfo fs = ext4::read_image(*now);
  const ext4::ImageInfo dev = internal ? fs : ext4::read_image(journal_device);
  jbd2::JournalSuperblock jsb = dev.journal_super;
  const auto log_place = [&](std::uint64_t log_block) -> std::pair<std::uint8_t, std::uint64_t> {
    if (!internal) return {kJournal, log_block};
    for (const auto& run : layout.journal_runs) {
      if (log_block < run.count) return {kData, run.start + log_block};
      log_block -= run.count;
    }
    throw std::logic_error("a log block past the internal journal");
  };

  // The mount: needs_recovery in the superblock, a start in the journal's.
  {
    Bytes first = block_of(*now, 0);
    ext4::Superblock sb = ext4::decode_superblock(std::span<const std::uint8_t, 1024>(first.data() + 1024, 1024));
    sb.feature_incompat |= ext4::incompat::kRecover;
    ext4::encode_superblock(sb, std::span<std::uint8_t, 1024>(first.data() + 1024, 1024));
    r.write(kData, 0, first, !o.nobarrier);
    jsb.start = jsb.first;
    jsb.sequence = 1;
    Bytes block(kBlock, 0);
    // The journal's superblock: log block 0 of an internal journal, the
    // block after the ext2 superblock on a journal device.
    const auto [where, at] = internal ? log_place(0) : std::pair{kJournal, dev.journal_superblock_block};
    if (!internal) journal_device.read(at * kBlock, block);
    else now->read(at * kBlock, block);
    jbd2::encode_journal_superblock(jsb, std::span<std::uint8_t, jbd2::kSuperblockSize>(block.data(), jbd2::kSuperblockSize));
    r.write(where, at * kBlock, block, true);
  }

  Ext4Workload w;
  jbd2::LogBuilder log(jsb, jsb.first, jsb.sequence);
  std::vector<std::pair<std::uint64_t, Bytes>> checkpoint;  // the last transaction's blocks, to go home
  for (unsigned k = 0; k < o.files; ++k) {
    std::unique_ptr<SparseImage> next = build(internal, k + 1, o.files);
    const ext4::TreeReader tree(*next);
    const auto found = tree.lookup(name_of(k));
    if (!found) throw std::logic_error("the builder lost " + name_of(k));
    std::set<std::uint64_t> data;
    for (const ext4::Extent& x : tree.extents(*found, found->inode.size))
      for (std::uint64_t b = x.physical; b < x.physical + x.length; ++b) data.insert(b);
    w.names.push_back(name_of(k));
    w.data_writes.emplace_back();
    if (o.fact_before_flush && k > 0 && !o.nobarrier) r.flush(kData);  // the liar's flush: the last step's data, only now
    for (const std::uint64_t b : data) {
      r.write(kData, b * kBlock, block_of(*next, b), false);
      w.data_writes.back().push_back(b * kBlock);
    }
    for (const auto& [b, bytes] : checkpoint) r.write(kData, b * kBlock, bytes, false);  // lazily, as jbd2 does
    checkpoint.clear();
    for (const std::uint64_t b : changed_blocks(*now, *next))
      if (b != 0 && data.count(b) == 0) checkpoint.emplace_back(b, block_of(*next, b));
    for (const auto& [b, bytes] : checkpoint) log.log(b, bytes);
    log.commit(1700000000 + k);
    std::vector<jbd2::LogBlockWrite>& blocks = log.blocks();
    for (std::size_t i = 0; i < blocks.size(); ++i) {
      if (i + 1 == blocks.size() && !o.fact_before_flush && !o.nobarrier) r.flush(kData);  // ordered: the data before the commit
      const auto [where, at] = log_place(blocks[i].log_block);
      r.write(where, at * kBlock, blocks[i].bytes, true);
    }
    blocks.clear();
    const Bytes content = ext4_workload_file(k);
    char crc[16];
    std::snprintf(crc, sizeof crc, "%08x", crashlab::fact_crc32c(content.data(), content.size()));
    r.mark("fact file " + name_of(k) + " size " + std::to_string(content.size()) + " crc32c " + crc);
    now = std::move(next);
  }
  for (const auto& [b, bytes] : checkpoint) r.write(kData, b * kBlock, bytes, false);
  if (!o.nobarrier) r.flush(kData);
  w.recording = r.finish();
  return w;
}

}  // namespace nvj::test
