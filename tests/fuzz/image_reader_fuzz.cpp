// SPDX-License-Identifier: BSD-3-Clause
// Fuzz target: fscore::ext4::read_image on untrusted images, who owns each
// block of those it reads (block_owners.h, nvj crash frames), and the
// decoders it relies on (ext4 and jbd2 superblocks, extent trees, block
// maps) on slices of them. A rejected image (std::exception) is fine; a crash, a sanitizer
// report or an accepted image that breaks what the reader promises is a
// finding, and aborts.
#include "tests/fuzz/image_reader_fuzz.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <map>
#include <optional>
#include <span>
#include <stdexcept>
#include <vector>

#include "fscore/block_io.h"
#include "fscore/endian.h"
#include "fscore/ext4/block_owners.h"
#include "fscore/ext4/extent_tree.h"
#include "fscore/ext4/features.h"
#include "fscore/ext4/image_reader.h"
#include "fscore/ext4/indirect_blocks.h"
#include "fscore/ext4/superblock.h"
#include "fscore/jbd2/journal_superblock.h"

namespace nvj::fuzz {
namespace {

namespace ext4 = fscore::ext4;
namespace jbd2 = fscore::jbd2;

constexpr std::size_t kMaxSlices = 64;        // records (or 1 KiB windows of a flat image) probed
constexpr std::size_t kMaxSliceBytes = 65536; // bytes of each scanned for extent roots
constexpr std::size_t kMaxRoots = 16;
constexpr std::size_t kMaxProbeExtents = 1024;

Outcome g_outcome;

[[noreturn]] void finding(const char* what) {
  std::fprintf(stderr, "image_reader_fuzz: %s\n", what);
  std::abort();
}

void check_range(std::uint64_t offset, std::size_t length, std::uint64_t size) {
  if (offset > size || length > size - offset) throw std::out_of_range("read past the end of the image");
}

// A flat image: the input bytes themselves. A read past their end throws,
// as a BlockSource does.
class FlatImage : public fscore::BlockSource {
 public:
  FlatImage(const std::uint8_t* data, std::size_t size) : data_(data), size_(size) {}
  std::uint64_t size() const override { return size_; }
  void read(std::uint64_t offset, std::span<std::uint8_t> bytes) const override {
    check_range(offset, bytes.size(), size_);
    if (!bytes.empty()) std::memcpy(bytes.data(), data_ + offset, bytes.size());
  }

 private:
  const std::uint8_t* data_;
  std::size_t size_;
};

// A sparse image: 1 KiB pages where records landed, zeros elsewhere. Its
// memory is bounded by the input's size: a record makes at most one page
// per KiB of its data plus one, about 90 bytes of memory per byte of input
// at worst (13-byte records).
class SparseImage : public fscore::BlockSource {
 public:
  static constexpr std::size_t kPage = 1024;
  explicit SparseImage(std::uint64_t size) : size_(size) {}

  void put(std::uint64_t offset, const std::uint8_t* data, std::size_t length) {
    if (offset >= size_) return;
    length = static_cast<std::size_t>(std::min<std::uint64_t>(length, size_ - offset));
    std::size_t done = 0;
    while (done < length) {
      const std::uint64_t at = offset + done;
      auto [it, added] = pages_.try_emplace(at / kPage);
      if (added) it->second.fill(0);
      const std::size_t in_page = static_cast<std::size_t>(at % kPage);
      const std::size_t n = std::min(length - done, kPage - in_page);
      std::memcpy(it->second.data() + in_page, data + done, n);
      done += n;
    }
  }

  std::uint64_t size() const override { return size_; }

  void read(std::uint64_t offset, std::span<std::uint8_t> bytes) const override {
    check_range(offset, bytes.size(), size_);
    std::size_t done = 0;
    while (done < bytes.size()) {
      const std::uint64_t at = offset + done;
      const std::size_t in_page = static_cast<std::size_t>(at % kPage);
      const std::size_t n = std::min(bytes.size() - done, kPage - in_page);
      const auto it = pages_.find(at / kPage);
      if (it == pages_.end()) {
        std::memset(bytes.data() + done, 0, n);
      } else {
        std::memcpy(bytes.data() + done, it->second.data() + in_page, n);
      }
      done += n;
    }
  }

 private:
  std::uint64_t size_;
  std::map<std::uint64_t, std::array<std::uint8_t, kPage>> pages_;
};

struct Slice {
  const std::uint8_t* data;
  std::size_t size;
};

bool is_sparse(const std::uint8_t* data, std::size_t size) {
  return size >= kSparseHeaderSize && std::memcmp(data, kSparseMagic, sizeof kSparseMagic) == 0;
}

// Parses a sparse input into `image`; the records' bytes become slices.
SparseImage parse_sparse(const std::uint8_t* data, std::size_t size, std::vector<Slice>& slices) {
  SparseImage image(fscore::load_le<std::uint64_t>(data + 8));
  std::size_t at = kSparseHeaderSize;
  while (size - at >= kRecordHeaderSize) {
    const std::uint64_t offset = fscore::load_le<std::uint64_t>(data + at);
    const std::size_t length = std::min<std::size_t>(fscore::load_le<std::uint32_t>(data + at + 8),
                                                     size - at - kRecordHeaderSize);
    at += kRecordHeaderSize;
    image.put(offset, data + at, length);
    if (slices.size() < kMaxSlices && length > 0) slices.push_back({data + at, length});
    at += length;
  }
  return image;
}

// What the reader promises about an image it accepts.
void check_accepted(const ext4::ImageInfo& info, const fscore::BlockSource& source) {
  const std::uint32_t bs = info.block_size;
  if (bs < 1024 || bs > 65536 || (bs & (bs - 1)) != 0) finding("accepted a block size out of range");
  if (bs != info.super.block_size()) finding("block size differs from the superblock's");
  if (info.blocks == 0 || info.blocks > source.size() / bs) finding("accepted more blocks than the device holds");
  if (info.journal_device) {
    if (info.journal_superblock_block >= info.blocks) finding("journal device superblock past the end");
    if (info.journal_super.maxlen > info.blocks) finding("journal device longer than the device");
    if (!info.journal_runs.empty()) finding("journal device with journal runs");
  }
  if (info.journal == ext4::JournalKind::kInternal) {
    if (info.journal_runs.empty()) finding("internal journal without runs");
    std::uint64_t total = 0;
    for (const ext4::BlockRun& r : info.journal_runs) {
      if (r.count == 0 || r.start >= info.blocks || r.count > info.blocks - r.start)
        finding("journal run outside the filesystem");
      total += r.count;
    }
    if (info.journal_superblock_block != info.journal_runs.front().start)
      finding("journal superblock is not the journal's first block");
    if (info.journal_super.maxlen > total) finding("journal longer than its runs");
    if (info.journal_super.block_size != bs) finding("journal block size differs from the filesystem's");
  } else if (!info.journal_runs.empty()) {
    finding("journal runs without an internal journal");
  }
}

void check_extents(const std::vector<ext4::Extent>& extents, std::uint64_t blocks) {
  if (extents.size() > kMaxProbeExtents) finding("read_extent_tree returned more than max_extents");
  std::uint64_t next = 0;
  for (const ext4::Extent& x : extents) {
    if (x.length == 0 || x.physical >= blocks || x.length > blocks - x.physical)
      finding("read_extent_tree accepted an extent outside the device");
    if (x.logical < next) finding("read_extent_tree accepted overlapping extents");
    next = std::uint64_t{x.logical} + x.length;
  }
}

// The decoders on their own, on slices of the input copied to buffers of
// exactly their size (so a decoder reading past them is caught).
void probe_slices(const std::vector<Slice>& slices, const fscore::BlockSource& source, std::uint32_t block_size) {
  std::vector<std::uint8_t> window(1024);
  std::size_t roots = 0;
  for (const Slice& s : slices) {
    // Both decoders check their magic number first: calling them on
    // slices without it would only throw (and throwing is what costs).
    if (s.size >= 1024) {
      std::memcpy(window.data(), s.data, 1024);
      const std::span<const std::uint8_t, 1024> bytes(window.data(), 1024);
      if (fscore::load_le<std::uint16_t>(window.data() + 0x38) == ext4::kSuperMagic) {
        try {
          (void)ext4::decode_superblock(bytes);
        } catch (const std::exception&) {
        }
      }
      if (fscore::load_be<std::uint32_t>(window.data()) == jbd2::kMagic) {
        try {
          const jbd2::JournalSuperblock j = jbd2::decode_journal_superblock(bytes);
          if (j.users.size() != j.nr_users || j.nr_users > jbd2::kMaxUsers) finding("jbd2 users do not match nr_users");
        } catch (const std::exception&) {
        }
      }
    }
    // Block maps of what look like block-mapped inodes (a file type, no
    // extents flag), as an inode table chunk holds them every 256 bytes.
    for (std::size_t at = 0; at + 256 <= s.size && at < 1024; at += 256) {
      const std::uint8_t* inode = s.data + at;
      const std::uint16_t type = fscore::load_le<std::uint16_t>(inode) & 0xF000;
      if ((type != 0x8000 && type != 0x4000) || (fscore::load_le<std::uint32_t>(inode + 0x20) & ext4::kExtentsFl) != 0)
        continue;
      std::array<std::uint8_t, 60> i_block{};
      std::memcpy(i_block.data(), inode + 0x28, i_block.size());
      const std::uint64_t file_blocks =
          std::min<std::uint64_t>((fscore::load_le<std::uint32_t>(inode + 4) + std::uint64_t{block_size} - 1) / block_size,
                                  kMaxProbeExtents);
      const std::uint64_t blocks = source.size() / block_size;
      try {
        check_extents(ext4::read_indirect_blocks(i_block, source, block_size, blocks, file_blocks, kMaxProbeExtents,
                                                 kMaxProbeExtents),
                      blocks);
      } catch (const std::exception&) {
      }
    }
    // Extent roots wherever the magic number is, as an inode's i_block
    // would hold them.
    const std::size_t scan = std::min(s.size, kMaxSliceBytes);
    for (std::size_t i = 0; i + 1 < scan && roots < kMaxRoots; ++i) {
      if (s.data[i] != 0x0A || s.data[i + 1] != 0xF3) continue;
      std::array<std::uint8_t, 60> root{};
      std::memcpy(root.data(), s.data + i, std::min<std::size_t>(root.size(), s.size - i));
      ++roots;
      const std::uint64_t blocks = source.size() / block_size;
      try {
        check_extents(ext4::read_extent_tree(root, source, block_size, blocks, kMaxProbeExtents), blocks);
      } catch (const std::exception&) {
      }
    }
  }
}

// Who owns which block (nvj crash frames' names): an image that reads owns
// blocks inside the filesystem only, and find() answers with an owner that
// holds the block.
void check_owners(const fscore::BlockSource& image, const ext4::ImageInfo& info) {
  std::optional<ext4::BlockOwners> owners;
  try {
    owners.emplace(ext4::BlockOwners::read(image, 256));
  } catch (const std::exception&) {
    return;  // a superblock it would not read: read_image's checks are not all of its own
  }
  for (const ext4::BlockOwner& o : owners->owners()) {
    if (o.count == 0 || o.start >= info.blocks || o.count > info.blocks - o.start) finding("an owner outside the filesystem");
    const ext4::BlockOwner* found = owners->find(o.start + o.count - 1);
    if (found == nullptr || o.start + o.count - 1 < found->start || o.start + o.count - 1 >= found->start + found->count)
      finding("find() does not find a block an owner holds");
  }
}

void run(const fscore::BlockSource& image, const std::vector<Slice>& slices) {
  std::optional<ext4::ImageInfo> info;
  try {
    info = ext4::read_image(image);
  } catch (const std::exception& e) {
    g_outcome.last_rejection = e.what();
  }
  if (info) {
    ++g_outcome.accepted;
    check_accepted(*info, image);
    check_owners(image, *info);
  } else {
    ++g_outcome.rejected;
  }
  try {
    (void)ext4::has_ext4_magic(image);
  } catch (const std::exception&) {
  }
  probe_slices(slices, image, info ? info->block_size : 4096);
}

}  // namespace

const Outcome& outcome() { return g_outcome; }

}  // namespace nvj::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace nvj::fuzz;
  std::vector<Slice> slices;
  if (is_sparse(data, size)) {
    const SparseImage image = parse_sparse(data, size, slices);
    run(image, slices);
  } else {
    for (std::size_t at = 0; at < size && slices.size() < kMaxSlices; at += 1024)
      slices.push_back({data + at, std::min<std::size_t>(1024, size - at)});
    const FlatImage image(data, size);
    run(image, slices);
  }
  return 0;
}
