// SPDX-License-Identifier: BSD-3-Clause
// A driver for the image reader's fuzz target where libFuzzer is not at
// hand (the default build uses g++): it builds valid seed images with
// ImageBuilder and build_journal_device (internal journals with 1 and 4 KiB
// blocks, in pieces, with extent trees of depth 1 and block-mapped as ext3
// has them; an external journal device; a filesystem naming one), then
// mutates them deterministically from a seed (bit flips, bytes set to 0,
// 0xFF or anything, interesting words written or copied into the
// superblock, group descriptor, journal inode, jbd2 superblock and the
// journal's tree blocks, blocks filled or copied, checksums fixed up or
// not, records added, truncation) and hands each result to
// LLVMFuzzerTestOneInput. The command line and the loop: fuzz_loop.h.
//
// Its own flag, --reasons, counts why read_image rejected the images
// (numbers left out), to see how deep the mutations get. Images are kept
// sparse (only the 1 KiB chunks that hold something), so a 2 GiB seed costs
// a few dozen KiB.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <iterator>
#include <map>
#include <optional>
#include <random>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "fscore/block_io.h"
#include "fscore/crc32c.h"
#include "fscore/endian.h"
#include "fscore/ext4/features.h"
#include "fscore/ext4/group_desc.h"
#include "fscore/ext4/image_builder.h"
#include "fscore/ext4/image_reader.h"
#include "fscore/ext4/inode.h"
#include "fscore/ext4/journal_device.h"
#include "fscore/ext4/superblock.h"
#include "fscore/jbd2/journal_superblock.h"
#include "tests/fuzz/fuzz_loop.h"
#include "tests/fuzz/image_reader_fuzz.h"
#include "tests/support/block_mapped_journal.h"
#include "tests/support/sparse_image.h"

namespace {

namespace ext4 = fscore::ext4;
namespace jbd2 = fscore::jbd2;
using nvj::fuzz::kRecordHeaderSize;
using nvj::fuzz::kSparseHeaderSize;
using nvj::fuzz::kSparseMagic;

constexpr std::uint64_t kChunk = 1024;
constexpr std::uint64_t kMiB = std::uint64_t{1} << 20;

// An image being built or analysed, in 1 KiB chunks; unwritten chunks read
// as zeros.
class ChunkImage : public nvj::test::SparseImage {
 public:
  explicit ChunkImage(std::uint64_t size) : SparseImage(size, kChunk) {}

  // The chunks that hold something other than zeros, by byte offset.
  std::map<std::uint64_t, std::vector<std::uint8_t>> nonzero_chunks() const {
    std::map<std::uint64_t, std::vector<std::uint8_t>> out;
    for (const auto& [page, chunk] : pages())
      if (std::any_of(chunk.begin(), chunk.end(), [](std::uint8_t b) { return b != 0; }))
        out.emplace(page * kChunk, chunk);
    return out;
  }
};

struct Region {
  std::uint64_t offset = 0;
  std::uint64_t length = 0;
};

struct Seed {
  std::string name;
  std::uint64_t size = 0;
  bool flat = false;  // fed as the device's bytes rather than sparse records
  std::map<std::uint64_t, std::vector<std::uint8_t>> chunks;
  std::vector<Region> hot;  // the metadata read_image reads
  std::uint32_t block_size = 0;
  std::uint64_t blocks = 0;
  // Where checksummed metadata is, to fix checksums up after a mutation so
  // that the reader looks further than the first checksum.
  bool metadata_csum = false;
  std::optional<Region> desc;
  std::optional<std::uint64_t> journal_inode;
  std::optional<std::uint64_t> journal_super;
};

// The encoded input of a seed, and where each chunk's bytes are in it.
struct Encoded {
  std::vector<std::uint8_t> bytes;
  std::map<std::uint64_t, std::size_t> position;  // sparse: chunk offset -> its data in bytes
};

Encoded encode(const Seed& seed) {
  Encoded e;
  if (seed.flat) {
    e.bytes.assign(seed.size, 0);
    for (const auto& [at, chunk] : seed.chunks)
      std::memcpy(e.bytes.data() + at, chunk.data(), std::min<std::uint64_t>(kChunk, seed.size - at));
    return e;
  }
  e.bytes.resize(kSparseHeaderSize);
  std::memcpy(e.bytes.data(), kSparseMagic, sizeof kSparseMagic);
  fscore::store_le<std::uint64_t>(e.bytes.data() + 8, seed.size);
  for (const auto& [at, chunk] : seed.chunks) {
    const std::size_t header = e.bytes.size();
    e.bytes.resize(header + kRecordHeaderSize + kChunk);
    fscore::store_le<std::uint64_t>(e.bytes.data() + header, at);
    fscore::store_le<std::uint32_t>(e.bytes.data() + header + 8, static_cast<std::uint32_t>(kChunk));
    std::memcpy(e.bytes.data() + header + kRecordHeaderSize, chunk.data(), kChunk);
    e.position.emplace(at, header + kRecordHeaderSize);
  }
  return e;
}

// `length` bytes of the device at `offset` inside `bytes` (a mutated copy
// of `base`'s), or null when they are not stored in one piece.
std::uint8_t* locate(std::vector<std::uint8_t>& bytes, const Seed& seed, const Encoded& base, std::uint64_t offset,
                     std::uint64_t length) {
  std::uint64_t at = offset;
  if (!seed.flat) {
    const auto it = base.position.find(offset / kChunk * kChunk);
    if (it == base.position.end() || offset % kChunk + length > kChunk) return nullptr;
    at = it->second + offset % kChunk;
  }
  if (at > bytes.size() || length > bytes.size() - at) return nullptr;
  return bytes.data() + at;
}

// ------------------------------------------------------------------ seeds

ext4::ImageOptions image_options(std::uint64_t bytes, std::uint32_t block_size, std::uint8_t id) {
  ext4::ImageOptions o;
  o.device_bytes = bytes;
  o.block_size = block_size;
  for (std::size_t i = 0; i < 16; ++i) {
    o.uuid[i] = static_cast<std::uint8_t>(id * 16 + i * 7 + 1);
    o.hash_seed[i] = static_cast<std::uint8_t>(id + i * 13);
  }
  o.label = "fuzz";
  o.now = {1700000000 + id, 0};
  return o;
}

// Where inode 8 is, found through group 0's descriptor.
std::uint64_t journal_inode_offset(const fscore::BlockSource& image, const ext4::ImageInfo& info) {
  const ext4::Superblock& sb = info.super;
  const std::uint32_t desc_size = (sb.feature_incompat & ext4::incompat::k64bit) != 0 ? sb.desc_size : 32;
  std::vector<std::uint8_t> desc(desc_size);
  image.read((std::uint64_t{sb.first_data_block} + 1) * info.block_size, desc);
  const ext4::GroupDesc d = ext4::decode_group_desc(desc);
  return d.inode_table * info.block_size + std::uint64_t{ext4::kJournalIno - 1} * sb.inode_size;
}

// Fills in what a seed's image holds and where its metadata is, from the
// image itself.
Seed analyse(std::string name, const ChunkImage& image, bool flat) {
  Seed s;
  s.name = std::move(name);
  s.size = image.size();
  s.flat = flat;
  s.chunks = image.nonzero_chunks();
  const ext4::ImageInfo info = ext4::read_image(image);  // a seed the reader refuses is a bug
  s.block_size = info.block_size;
  s.blocks = info.blocks;
  const std::uint64_t bs = info.block_size;
  s.hot.push_back({ext4::kSuperOffset, ext4::kSuperSize});
  if (info.journal_device) {
    s.journal_super = info.journal_superblock_block * bs;
    s.hot.push_back({*s.journal_super, jbd2::kSuperblockSize});
    return s;
  }
  const ext4::Superblock& sb = info.super;
  s.metadata_csum = sb.has_metadata_csum();
  const std::uint32_t desc_size = (sb.feature_incompat & ext4::incompat::k64bit) != 0 ? sb.desc_size : 32;
  s.desc = Region{(std::uint64_t{sb.first_data_block} + 1) * bs, desc_size};
  s.hot.push_back({s.desc->offset, std::min<std::uint64_t>(bs, kChunk)});  // the first descriptors
  if (info.journal != ext4::JournalKind::kInternal) return s;

  s.journal_inode = journal_inode_offset(image, info);
  s.hot.push_back({*s.journal_inode, sb.inode_size});
  s.journal_super = info.journal_superblock_block * bs;
  s.hot.push_back({*s.journal_super, jbd2::kSuperblockSize});
  // The journal's extent tree blocks, when it has any (depth 1 here).
  std::vector<std::uint8_t> raw(sb.inode_size);
  image.read(*s.journal_inode, raw);
  const ext4::Inode j = ext4::decode_inode(raw);
  if ((j.flags & ext4::kExtentsFl) == 0) return s;  // block-mapped: the caller knows its indirect blocks
  const std::uint16_t depth = fscore::load_le<std::uint16_t>(j.block.data() + 6);
  const std::uint16_t entries = fscore::load_le<std::uint16_t>(j.block.data() + 2);
  for (std::uint16_t i = 0; depth > 0 && i < entries && i < 4; ++i) {
    const std::uint8_t* e = j.block.data() + 12 + 12 * std::size_t{i};
    const std::uint64_t leaf = fscore::load_le<std::uint32_t>(e + 4) | std::uint64_t{fscore::load_le<std::uint16_t>(e + 8)} << 32;
    s.hot.push_back({leaf * bs, bs});
  }
  return s;
}

struct Shape {
  bool populate = false;          // a few directories, files, symlinks
  bool flat = false;              // fed as the device's bytes
  std::uint16_t extent_depth = 0; // the journal's extent tree must have this depth (0: any)
  bool block_mapped = false;      // the journal mapped by indirect blocks, as ext3 does
};

Seed filesystem_seed(std::string name, const ext4::ImageOptions& o, const Shape& shape) {
  ChunkImage image(o.device_bytes);
  ext4::ImageBuilder b(o, &image);
  if (shape.populate) {
    ext4::Attributes a;
    a.atime = a.mtime = a.ctime = a.crtime = o.now;
    const ext4::FileReader pattern = [](std::uint64_t offset, std::span<std::uint8_t> buffer) {
      for (std::size_t i = 0; i < buffer.size(); ++i) buffer[i] = static_cast<std::uint8_t>((offset + i) * 31 + 7);
    };
    for (int d = 0; d < 4; ++d) {
      const std::uint32_t dir = b.add_directory(ext4::ImageBuilder::kRoot, "dir" + std::to_string(d), a);
      for (int f = 0; f < 8; ++f) {
        // Sizes up to 50 KB, but data only in the first 100 bytes: the rest
        // is hole, so the seed stays a few dozen chunks of metadata.
        const std::uint64_t size = 1000 * static_cast<std::uint64_t>(f * f + 1);
        const std::vector<ext4::ByteRange> data = {{0, 100}};
        b.add_file(dir, "file" + std::to_string(f), a, size, data, pattern);
      }
      b.add_symlink(dir, "link", a, "../dir0/file0");
    }
    b.add_special(ext4::ImageBuilder::kRoot, "fifo", a, ext4::FileType::kFifo);
  }
  const ext4::ImageLayout layout = b.finish();
  const std::vector<std::uint64_t> indirect = shape.block_mapped
                                                  ? nvj::test::make_journal_block_mapped(image, layout.journal_runs)
                                                  : std::vector<std::uint64_t>{};
  Seed s = analyse(std::move(name), image, shape.flat);
  for (const std::uint64_t block : indirect) s.hot.push_back({block * s.block_size, s.block_size});
  if (shape.extent_depth > 0) {  // the seed is there for its tree: make sure it has one
    std::vector<std::uint8_t> raw(256);
    image.read(*s.journal_inode, raw);
    const std::uint16_t depth = fscore::load_le<std::uint16_t>(ext4::decode_inode(raw).block.data() + 6);
    if (depth != shape.extent_depth)
      throw std::runtime_error(s.name + ": journal extent tree of depth " + std::to_string(depth));
  }
  return s;
}

Seed journal_device_seed(std::string name, std::uint64_t bytes, std::uint32_t block_size, bool flat) {
  ChunkImage image(bytes);
  ext4::JournalDeviceOptions o;
  o.device_bytes = bytes;
  o.block_size = block_size;
  const ext4::ImageOptions fs = image_options(bytes, block_size, 9);
  o.uuid = fs.uuid;
  o.hash_seed = fs.hash_seed;
  o.label = "fuzz-journal";
  o.now = fs.now;
  o.users = {image_options(bytes, block_size, 10).uuid};
  ext4::build_journal_device(o, image);
  return analyse(std::move(name), image, flat);
}

std::vector<Seed> build_seeds() {
  std::vector<Seed> seeds;
  // The smallest filesystem with a journal, fed flat: every byte is there.
  seeds.push_back(filesystem_seed("internal-1k-flat", image_options(2 * kMiB, 1024, 1), {.flat = true}));
  seeds.push_back(filesystem_seed("internal-1k", image_options(8 * kMiB, 1024, 2), {}));
  ext4::ImageOptions o = image_options(16 * kMiB, 4096, 3);
  o.journal_blocks = 1024;
  seeds.push_back(filesystem_seed("internal-4k", o, {}));
  o = image_options(16 * kMiB, 4096, 4);
  o.journal = ext4::JournalKind::kExternal;
  o.external_journal_uuid = image_options(0, 0, 9).uuid;
  seeds.push_back(filesystem_seed("external-4k", o, {}));
  seeds.push_back(journal_device_seed("journal-device-4k", 8 * kMiB, 4096, false));
  seeds.push_back(journal_device_seed("journal-device-1k-flat", 1536 * 1024, 1024, true));
  // 256 MiB with 1 KiB blocks and a journal of 110000 blocks: no gap is that
  // long, so the journal is in pieces, more than four extents, depth 1.
  o = image_options(256 * kMiB, 1024, 5);
  o.journal_blocks = 110000;
  seeds.push_back(filesystem_seed("populated-1k-pieces", o, {.populate = true, .extent_depth = 1}));
  // 2 GiB with 4 KiB blocks: one run of 200000 blocks, seven extents.
  o = image_options(2048 * kMiB, 4096, 6);
  o.journal_blocks = 200000;
  seeds.push_back(filesystem_seed("big-journal-4k", o, {.extent_depth = 1}));
  // Block-mapped journals, as ext3 has them: through a double indirect
  // block with both block sizes.
  seeds.push_back(filesystem_seed("block-mapped-1k", image_options(8 * kMiB, 1024, 7), {.block_mapped = true}));
  o = image_options(32 * kMiB, 4096, 8);
  o.journal_blocks = 2048;
  seeds.push_back(filesystem_seed("block-mapped-4k", o, {.block_mapped = true}));
  return seeds;
}

// --------------------------------------------------------------- mutation

constexpr std::uint32_t kInteresting32[] = {0,          1,          2,          3,          4,          7,
                                            8,          11,         12,         16,         32,         64,
                                            127,        128,        255,        256,        1023,       1024,
                                            4096,       32767,      32768,      32769,      65535,      65536,
                                            0x7FFFFFFF, 0x80000000, 0xFFFFFFFE, 0xFFFFFFFF, 0xF30A,     0xEF53,
                                            jbd2::kMagic};

class Mutator {
 public:
  explicit Mutator(std::uint64_t seed) : rng_(seed) {}

  std::uint64_t below(std::uint64_t n) { return n == 0 ? 0 : rng_() % n; }
  bool one_in(std::uint64_t n) { return below(n) == 0; }

  // Somewhere worth changing: mostly the metadata the reader reads, else
  // any stored chunk.
  std::uint64_t target(const Seed& s) {
    if (!s.hot.empty() && below(10) < 7) {
      const Region& r = s.hot[below(s.hot.size())];
      return r.offset + below(r.length);
    }
    auto it = s.chunks.begin();
    std::advance(it, static_cast<std::ptrdiff_t>(below(s.chunks.size())));
    return it->first + below(kChunk);
  }

  std::uint32_t interesting(const Seed& s) {
    switch (below(4)) {
      case 0: return static_cast<std::uint32_t>(s.blocks + below(3) - 1);
      case 1: return static_cast<std::uint32_t>(rng_());
      default: return kInteresting32[below(std::size(kInteresting32))];
    }
  }

  void mutate(std::vector<std::uint8_t>& bytes, const Seed& s, const Encoded& base) {
    const std::uint64_t at = target(s);
    switch (below(10)) {
      case 0:
      case 1: {
        if (std::uint8_t* p = locate(bytes, s, base, at, 1)) *p ^= static_cast<std::uint8_t>(1u << below(8));
        break;
      }
      case 2: {
        static constexpr std::uint8_t kBytes[] = {0x00, 0xFF, 0x01, 0x80, 0x7F};
        if (std::uint8_t* p = locate(bytes, s, base, at, 1)) *p = kBytes[below(std::size(kBytes))];
        break;
      }
      case 3: {
        if (std::uint8_t* p = locate(bytes, s, base, at, 1)) *p = static_cast<std::uint8_t>(rng_());
        break;
      }
      case 4: {  // a 32-bit word, little-endian (ext4) or big-endian (jbd2)
        if (std::uint8_t* p = locate(bytes, s, base, at & ~std::uint64_t{3}, 4)) {
          const std::uint32_t v = interesting(s);
          if (one_in(2)) {
            fscore::store_le<std::uint32_t>(p, v);
          } else {
            fscore::store_be<std::uint32_t>(p, v);
          }
        }
        break;
      }
      case 5: {  // a 16-bit field: counts, depths, magic numbers
        if (std::uint8_t* p = locate(bytes, s, base, at & ~std::uint64_t{1}, 2))
          fscore::store_le<std::uint16_t>(p, static_cast<std::uint16_t>(interesting(s)));
        break;
      }
      case 6: {  // a word copied from elsewhere in the metadata
        std::uint8_t* to = locate(bytes, s, base, at & ~std::uint64_t{3}, 4);
        const std::uint8_t* from = locate(bytes, s, base, target(s) & ~std::uint64_t{3}, 4);
        if (to != nullptr && from != nullptr) std::memmove(to, from, 4);
        break;
      }
      case 7: {  // a small step up or down
        if (std::uint8_t* p = locate(bytes, s, base, at & ~std::uint64_t{3}, 4)) {
          const auto step = static_cast<std::uint32_t>(1 + below(16));
          const std::uint32_t v = fscore::load_le<std::uint32_t>(p);
          fscore::store_le<std::uint32_t>(p, one_in(2) ? v + step : v - step);
        }
        break;
      }
      case 8: {  // a block filled with one word: a table of the same block number, all ones, ...
        const std::uint64_t bs = s.block_size;
        std::uint8_t word[4];
        if (const std::uint8_t* from = locate(bytes, s, base, target(s) & ~std::uint64_t{3}, 4); from != nullptr && one_in(2)) {
          std::memcpy(word, from, 4);
        } else {
          fscore::store_le<std::uint32_t>(word, one_in(2) ? static_cast<std::uint32_t>(below(s.blocks)) : interesting(s));
        }
        for (std::uint64_t i = 0; i < bs; i += kChunk) {
          if (std::uint8_t* p = locate(bytes, s, base, (at / bs) * bs + i, kChunk))
            for (std::uint64_t k = 0; k < kChunk; k += 4) std::memcpy(p + k, word, 4);
        }
        break;
      }
      default: {  // a block of metadata copied over another block
        const std::uint64_t bs = s.block_size;
        const Region& from = s.hot[below(s.hot.size())];
        const std::uint64_t to = (at / bs) * bs;
        for (std::uint64_t i = 0; i < std::min<std::uint64_t>(from.length, bs); i += kChunk) {
          const std::uint8_t* src = locate(bytes, s, base, from.offset / kChunk * kChunk + i, kChunk);
          std::uint8_t* dst = locate(bytes, s, base, to + i, kChunk);
          if (src != nullptr && dst != nullptr && src != dst) std::memmove(dst, src, kChunk);
        }
        break;
      }
    }
  }

  // A sparse input gets a new record: a chunk of metadata (or noise) at a
  // block the reader may be pointed at.
  void add_record(std::vector<std::uint8_t>& bytes, const Seed& s) {
    if (s.flat) return;
    const std::uint64_t blocks = std::min<std::uint64_t>(s.blocks, s.size / s.block_size);
    const std::uint64_t at = below(blocks) * s.block_size + (one_in(4) ? below(s.block_size / kChunk) * kChunk : 0);
    std::vector<std::uint8_t> record(kRecordHeaderSize + kChunk);
    fscore::store_le<std::uint64_t>(record.data(), at);
    fscore::store_le<std::uint32_t>(record.data() + 8, static_cast<std::uint32_t>(kChunk));
    if (one_in(3)) {
      for (std::size_t i = kRecordHeaderSize; i < record.size(); ++i) record[i] = static_cast<std::uint8_t>(rng_());
    } else {
      auto it = s.chunks.begin();
      std::advance(it, static_cast<std::ptrdiff_t>(below(s.chunks.size())));
      std::memcpy(record.data() + kRecordHeaderSize, it->second.data(), kChunk);
    }
    bytes.insert(bytes.end(), record.begin(), record.end());
  }

  void truncate(std::vector<std::uint8_t>& bytes, const Seed& s) {
    if (s.flat || one_in(3)) {
      const std::size_t keep = s.flat ? 0 : kSparseHeaderSize;
      bytes.resize(keep + below(bytes.size() - keep + 1));
      return;
    }
    const std::uint64_t sizes[] = {below(s.size),  s.size / 2, s.size - 1, 2048,
                                   0,              s.size + below(s.size) + 1, std::uint64_t{1} << 63,
                                   ~std::uint64_t{0}};
    fscore::store_le<std::uint64_t>(bytes.data() + 8, sizes[below(std::size(sizes))]);
  }

 private:
  std::mt19937_64 rng_;
};

std::uint16_t group_desc_checksum(const std::uint8_t* desc, std::size_t size, std::uint32_t seed) {
  constexpr std::size_t kChecksum = 0x1E;
  std::uint8_t group[4];
  fscore::store_le<std::uint32_t>(group, 0);
  std::uint32_t crc = fscore::crc32c(seed, group, 4);
  crc = fscore::crc32c(crc, desc, kChecksum);
  const std::uint8_t zero[2] = {0, 0};
  crc = fscore::crc32c(crc, zero, 2);
  if (size > kChecksum + 2) crc = fscore::crc32c(crc, desc + kChecksum + 2, size - kChecksum - 2);
  return static_cast<std::uint16_t>(crc);
}

// Makes the checksums of the metadata read_image checks match again, so a
// mutation is judged on what it changed.
void fix_checksums(std::vector<std::uint8_t>& bytes, const Seed& s, const Encoded& base) {
  std::uint8_t* sb = locate(bytes, s, base, ext4::kSuperOffset, ext4::kSuperSize);
  if (sb != nullptr && s.metadata_csum) {
    if ((fscore::load_le<std::uint32_t>(sb + 0x64) & ext4::ro_compat::kMetadataCsum) != 0)
      fscore::store_le<std::uint32_t>(sb + 0x3FC,
                                      ext4::superblock_checksum(std::span<const std::uint8_t, 1024>(sb, 1024)));
    const std::uint32_t seed = fscore::crc32c(~0u, sb + 0x68, 16);
    if (s.desc) {
      if (std::uint8_t* d = locate(bytes, s, base, s.desc->offset, s.desc->length))
        fscore::store_le<std::uint16_t>(d + 0x1E, group_desc_checksum(d, s.desc->length, seed));
    }
    if (s.journal_inode) {
      if (std::uint8_t* p = locate(bytes, s, base, *s.journal_inode, 256)) {
        const std::span<std::uint8_t> raw(p, 256);
        ext4::encode_inode(ext4::decode_inode(raw), ext4::kJournalIno, seed, raw);
      }
    }
  }
  if (s.journal_super) {
    std::uint8_t* j = locate(bytes, s, base, *s.journal_super, jbd2::kSuperblockSize);
    if (j != nullptr && (fscore::load_be<std::uint32_t>(j + 0x28) & (jbd2::feature::kIncompatCsumV2 |
                                                                      jbd2::feature::kIncompatCsumV3)) != 0) {
      std::vector<std::uint8_t> copy(j, j + jbd2::kSuperblockSize);
      std::memset(copy.data() + 0xFC, 0, 4);
      fscore::store_be<std::uint32_t>(j + 0xFC, fscore::crc32c(~0u, copy.data(), copy.size()));
    }
  }
}

// ---------------------------------------------------------------- driver

// A rejection message with its numbers left out, to count alike ones together.
std::string reason(const std::string& message) {
  std::string out;
  for (const char c : message) {
    if (c >= '0' && c <= '9') {
      if (out.empty() || out.back() != 'N') out += 'N';
    } else {
      out += c;
    }
  }
  return out;
}

constexpr nvj::fuzz::DriverFlag kFlags[] = {
    {"--reasons", "count why read_image rejected the images (numbers left out)"}};

}  // namespace

int main(int argc, char** argv) {
  const nvj::fuzz::LoopOptions options = nvj::fuzz::parse_loop_options("image_reader_fuzz", argc, argv, kFlags);
  std::vector<Seed> seeds;
  try {
    seeds = build_seeds();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "image_reader_fuzz: building the seed images: %s\n", e.what());
    return 1;
  }
  nvj::fuzz::FuzzLoop loop;
  loop.name = "image_reader_fuzz";
  std::vector<Encoded> encoded;
  for (const Seed& s : seeds) {
    encoded.push_back(encode(s));
    loop.seeds.push_back({s.name, encoded.back().bytes});
    // Unmutated, every seed must be accepted, or the fuzzing starts nowhere.
    const std::uint64_t before = nvj::fuzz::outcome().accepted;
    LLVMFuzzerTestOneInput(encoded.back().bytes.data(), encoded.back().bytes.size());
    if (nvj::fuzz::outcome().accepted == before) {
      std::fprintf(stderr, "image_reader_fuzz: seed %s is rejected unmutated\n", s.name.c_str());
      return 1;
    }
  }

  Mutator m(options.seed);
  loop.next = [&](std::vector<std::uint8_t>& bytes) {
    const std::size_t which = static_cast<std::size_t>(m.below(seeds.size()));
    const Seed& s = seeds[which];
    const Encoded& base = encoded[which];
    bytes = base.bytes;
    const std::uint64_t mutations = m.one_in(8) ? 1 + m.below(16) : 1 + m.below(3);
    for (std::uint64_t i = 0; i < mutations; ++i) m.mutate(bytes, s, base);
    if (m.one_in(16)) m.add_record(bytes, s);
    if (!m.one_in(4)) fix_checksums(bytes, s, base);
    if (m.one_in(16)) m.truncate(bytes, s);
    return which;
  };
  const nvj::fuzz::Outcome start = nvj::fuzz::outcome();
  std::uint64_t accepted_so_far = start.accepted;
  std::vector<std::uint64_t> accepted(seeds.size(), 0);
  std::map<std::string, std::uint64_t> reasons;
  const bool count_reasons = options.has("--reasons");
  loop.after = [&](std::size_t which) {
    const nvj::fuzz::Outcome& o = nvj::fuzz::outcome();
    if (o.accepted > accepted_so_far) {
      accepted[which] += o.accepted - accepted_so_far;
      accepted_so_far = o.accepted;
    } else if (count_reasons) {
      ++reasons[reason(o.last_rejection)];
    }
  };
  loop.seed_note = [&](std::size_t which) {
    char note[128];
    std::snprintf(note, sizeof note, " %8llu accepted  (%zu chunks, %llu bytes logical)",
                  static_cast<unsigned long long>(accepted[which]), seeds[which].chunks.size(),
                  static_cast<unsigned long long>(seeds[which].size));
    return std::string(note);
  };
  std::uint64_t replayed_accepted = start.accepted;
  loop.verdict = [&] {
    const nvj::fuzz::Outcome& o = nvj::fuzz::outcome();
    const bool ok = o.accepted > replayed_accepted;
    replayed_accepted = o.accepted;
    return ok ? std::string("accepted") : "rejected: " + o.last_rejection;
  };
  loop.summary = [&] {
    const nvj::fuzz::Outcome& o = nvj::fuzz::outcome();
    std::printf("  %llu images accepted, %llu rejected\n", static_cast<unsigned long long>(o.accepted - start.accepted),
                static_cast<unsigned long long>(o.rejected - start.rejected));
    if (!count_reasons) return;
    std::vector<std::pair<std::uint64_t, std::string>> sorted;
    for (const auto& [what, count] : reasons) sorted.emplace_back(count, what);
    std::sort(sorted.rbegin(), sorted.rend());
    std::printf("why images were rejected:\n");
    for (const auto& [count, what] : sorted) std::printf("  %8llu  %s\n", static_cast<unsigned long long>(count), what.c_str());
  };
  return nvj::fuzz::run_fuzz_loop(options, loop);
}
