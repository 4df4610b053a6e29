// SPDX-License-Identifier: BSD-3-Clause
#include "tests/support/jbd2_log_builder.h"

#include <algorithm>
#include <cstring>

#include "fscore/endian.h"

namespace fscore::jbd2 {
namespace {


}  // namespace

LogBuilder::LogBuilder(const JournalSuperblock& sb, std::uint32_t head, std::uint32_t tid)
    : format_(LogFormat::from(sb)), uuid_(sb.uuid), head_(head), tid_(tid) {}

void LogBuilder::log(std::uint64_t target, std::span<const std::uint8_t> content) {
  Logged l{target, std::vector<std::uint8_t>(format_.block_size, 0)};
  std::copy_n(content.begin(), std::min<std::size_t>(content.size(), format_.block_size), l.content.begin());
  logged_.push_back(std::move(l));
}

std::size_t LogBuilder::tags_per_descriptor() const {
  // The kernel closes a descriptor once less than a tag, a uuid and the tail
  // would still fit; the first tag carries the uuid.
  const std::size_t tag = format_.tag_bytes();
  std::size_t space = format_.block_size - kLogBlockHeaderBytes;
  std::size_t n = 0;
  for (;;) {
    space -= tag + (n == 0 ? 16 : 0);
    ++n;
    if (space < tag + 16 + format_.tail_bytes()) return n;
  }
}

std::vector<std::uint8_t>& LogBuilder::emit() {
  out_.push_back(LogBlockWrite{head_, std::vector<std::uint8_t>(format_.block_size, 0)});
  head_ = head_ + 1 >= format_.last ? format_.first : head_ + 1;
  return out_.back().bytes;
}

void LogBuilder::header(std::vector<std::uint8_t>& block, BlockType type) const {
  store_be<std::uint32_t>(block.data(), kMagic);
  store_be<std::uint32_t>(block.data() + 4, static_cast<std::uint32_t>(type));
  store_be<std::uint32_t>(block.data() + 8, tid_);
}

std::size_t LogBuilder::commit(std::uint64_t seconds, std::uint32_t nanoseconds) {
  return lay_out(true, seconds, nanoseconds);
}

std::size_t LogBuilder::abandon() { return lay_out(false, 0, 0); }

std::size_t LogBuilder::lay_out(bool with_commit, std::uint64_t seconds, std::uint32_t nanoseconds) {
  const std::size_t before = out_.size();
  const std::size_t bs = format_.block_size;
  std::uint32_t crc32_sum = ~0u;  // checksum v1 over descriptors and logged blocks

  const std::size_t record = format_.bit64 ? 8 : 4;
  for (std::size_t i = 0; i < revoked_.size();) {
    auto& block = emit();
    header(block, BlockType::kRevoke);
    std::size_t at = 16;
    for (; i < revoked_.size() && at + record <= bs - format_.tail_bytes(); ++i, at += record) {
      if (format_.bit64) store_be<std::uint64_t>(block.data() + at, revoked_[i]);
      else store_be<std::uint32_t>(block.data() + at, static_cast<std::uint32_t>(revoked_[i]));
    }
    store_be<std::uint32_t>(block.data() + kLogBlockHeaderBytes, static_cast<std::uint32_t>(at));
    set_block_tail_checksum(format_, block);
  }

  const std::size_t per = tags_per_descriptor();
  const std::size_t tag_size = format_.tag_bytes();
  for (std::size_t i = 0; i < logged_.size(); i += per) {
    const std::size_t n = std::min(per, logged_.size() - i);
    const std::size_t descriptor = out_.size();
    header(emit(), BlockType::kDescriptor);
    std::size_t at = kLogBlockHeaderBytes;
    for (std::size_t k = 0; k < n; ++k) {
      Logged& l = logged_[i + k];
      std::uint32_t flags = k == 0 ? 0 : tag_flag::kSameUuid;
      if (k + 1 == n) flags |= tag_flag::kLastTag;
      auto& data = emit();
      data = l.content;
      if (load_be<std::uint32_t>(data.data()) == kMagic) {
        std::memset(data.data(), 0, 4);
        flags |= tag_flag::kEscape;
      }
      const std::uint32_t sum = logged_block_checksum(format_, tid_, data);
      std::uint8_t* tag = out_[descriptor].bytes.data() + at;
      store_be<std::uint32_t>(tag, static_cast<std::uint32_t>(l.target));
      if (format_.bit64) store_be<std::uint32_t>(tag + 8, static_cast<std::uint32_t>(l.target >> 32));
      if (format_.csum_v3) {
        store_be<std::uint32_t>(tag + 4, flags);
        store_be<std::uint32_t>(tag + 12, sum);
      } else {
        if (format_.csum_v2) store_be<std::uint16_t>(tag + 4, static_cast<std::uint16_t>(sum));
        store_be<std::uint16_t>(tag + 6, static_cast<std::uint16_t>(flags));
      }
      at += tag_size;
      if (k == 0) {
        std::memcpy(out_[descriptor].bytes.data() + at, uuid_.data(), 16);
        at += 16;
      }
    }
    set_block_tail_checksum(format_, out_[descriptor].bytes);
    for (std::size_t k = descriptor; k < out_.size(); ++k) crc32_sum = crc32_be(crc32_sum, out_[k].bytes);
  }

  if (with_commit) {
    auto& block = emit();
    header(block, BlockType::kCommit);
    if (format_.csum_v2_or_v3()) {
      block[12] = kCrc32cChecksum;
      block[13] = 4;
    } else if (format_.csum_v1) {
      block[12] = kCrc32Checksum;
      block[13] = 4;
      store_be<std::uint32_t>(block.data() + 16, crc32_sum);
    }
    store_be<std::uint64_t>(block.data() + 48, seconds);
    store_be<std::uint32_t>(block.data() + 56, nanoseconds);
    set_commit_checksum(format_, block);
  }
  revoked_.clear();
  logged_.clear();
  ++tid_;
  return out_.size() - before;
}

}  // namespace fscore::jbd2
