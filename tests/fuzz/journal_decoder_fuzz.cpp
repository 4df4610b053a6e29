// SPDX-License-Identifier: BSD-3-Clause
// Fuzz target: fscore::jbd2::JournalDecoder following a journal from the
// writes it receives, in any order, with any bytes (input format in
// journal_decoder_fuzz.h). A crash, a sanitizer report, or events and
// totals that disagree (commits counted twice, a head outside the log, a
// fill outside [0, 1], a transaction whose block counts do not add up) is a
// finding, and aborts.
#include "tests/fuzz/journal_decoder_fuzz.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <span>

#include "fscore/endian.h"
#include "fscore/jbd2/journal_decoder.h"
#include "tests/support/sparse_image.h"

namespace nvj::fuzz::decoder {
namespace {

namespace jbd2 = fscore::jbd2;

Outcome g_outcome;

[[noreturn]] void finding(const char* what) {
  std::fprintf(stderr, "journal_decoder_fuzz: %s\n", what);
  std::abort();
}

void expect(bool ok, const char* what) {
  if (!ok) finding(what);
}

JournalChoice choice(std::uint32_t block_size, std::uint32_t maxlen, std::uint32_t incompat, std::uint32_t compat,
                     std::uint8_t id, std::uint64_t superblock_offset = 0) {
  JournalChoice c;
  c.sb.block_size = block_size;
  c.sb.maxlen = maxlen;
  c.sb.first = superblock_offset == 0 ? 1 : static_cast<std::uint32_t>(superblock_offset / block_size + 1);
  c.sb.sequence = 1;
  c.sb.feature_compat = compat;
  c.sb.feature_incompat = incompat;
  if (c.sb.has_csum_v2_or_v3()) c.sb.checksum_type = 4;
  if ((incompat & jbd2::feature::kIncompatFastCommit) != 0) c.sb.num_fc_blocks = 64;
  for (std::size_t i = 0; i < 16; ++i) c.sb.uuid[i] = static_cast<std::uint8_t>(id * 16 + i * 5 + 3);
  c.sb.nr_users = superblock_offset == 0 ? 0 : 1;
  if (c.sb.nr_users != 0) c.sb.users.push_back(c.sb.uuid);
  c.superblock_offset = superblock_offset;
  return c;
}

// What the decoder reported, counted, with the checks each event allows.
class Recorder : public jbd2::DecoderEvents {
 public:
  const jbd2::JournalDecoder* decoder = nullptr;
  bool oracle = false;
  jbd2::DecoderTotals seen;

  // Set when a superblock update moves the log's first or last block (the
  // decoder then starts over).
  bool reshaped = false;

  void on_superblock(const jbd2::SuperblockUpdate&) override {
    ++seen.superblock_writes;
    const jbd2::LogFormat& f = format();
    if (f.maxlen == maxlen_ && f.block_size == block_size_ && (f.first != first_ || f.last != last_)) reshaped = true;
    maxlen_ = f.maxlen, block_size_ = f.block_size, first_ = f.first, last_ = f.last;
  }
  void on_descriptor(std::uint32_t, std::uint32_t block, std::span<const jbd2::Tag> tags) override {
    in_log(block, "descriptor block outside the log");
    expect(tags.size() <= format().block_size / 8, "more tags than a descriptor block holds");
    ++seen.descriptor_blocks;
  }
  void on_logged_block(const jbd2::LoggedBlock& b) override {
    in_log(b.log_block, "logged block outside the log");
    expect(b.content.size() == format().block_size, "logged block of the wrong size");
    expect(oracle || b.kind == jbd2::LoggedKind::kUnknown, "a kind without an oracle");
    ++seen.logged_blocks;
    if (b.escaped) ++seen.escaped_blocks;
    if (b.kind == jbd2::LoggedKind::kMetadata) ++seen.metadata_blocks;
    if (b.kind == jbd2::LoggedKind::kData) ++seen.data_blocks;
  }
  void on_revoke(std::uint32_t, std::uint32_t block, std::span<const std::uint64_t> records) override {
    in_log(block, "revoke block outside the log");
    expect(records.size() <= format().block_size / 4, "more revoke records than a block holds");
    ++seen.revoke_blocks;
    seen.revoked += records.size();
  }
  void on_commit(const jbd2::Transaction& tx) override {
    in_log(tx.commit_log_block, "commit block outside the log");
    in_log(tx.first_log_block, "transaction starts outside the log");
    expect(tx.log_blocks == tx.descriptor_blocks + tx.logged_blocks + tx.revoke_blocks + 1,
           "a transaction's blocks do not add up");
    expect(tx.escaped_blocks <= tx.logged_blocks && tx.metadata_blocks + tx.data_blocks <= tx.logged_blocks,
           "a transaction's logged blocks do not add up");
    expect(tx.checksum_errors <= tx.log_blocks, "more checksum errors than blocks");
    expect(tx.log_blocks <= format().maxlen, "a transaction longer than the journal");
    ++seen.transactions;
    seen.log_bytes += tx.bytes(format().block_size);
  }
  void on_fast_commit(std::uint32_t block) override {
    expect(block >= format().last && block < format().maxlen, "fast-commit block outside the fast-commit area");
    ++seen.fast_commit_blocks;
  }
  void on_problem(const jbd2::ProblemReport& p) override {
    ++seen.problems;
    if (p.problem == jbd2::Problem::kChecksum) ++seen.checksum_errors;
  }

 private:
  const jbd2::LogFormat& format() const {
    if (decoder->format() == nullptr) finding("an event without a format");
    return *decoder->format();
  }
  void in_log(std::uint32_t block, const char* what) const {
    expect(reshaped || (block >= format().first && block < format().last), what);
  }
  std::uint32_t maxlen_ = 0, block_size_ = 0, first_ = 0, last_ = 0;
};

class Oracle : public jbd2::LoggedKindOracle {
 public:
  jbd2::LoggedKind classify(std::uint64_t target, std::span<const std::uint8_t> content) const override {
    if (content.size() >= 4 && fscore::load_be<std::uint32_t>(content.data()) == jbd2::kMagic)
      return jbd2::LoggedKind::kMetadata;
    return static_cast<jbd2::LoggedKind>(target % 3);
  }
};

void check(const jbd2::JournalDecoder& d, Recorder& r, jbd2::Nanos now) {
  const double fill = d.fill();
  expect(fill >= 0.0 && fill <= 1.0, "fill outside [0, 1]");
  if (!d.synchronized()) r.reshaped = false;
  if (d.synchronized()) {
    expect(d.format() != nullptr, "synchronized without a format");
    expect(d.head() >= d.format()->first && d.head() < d.format()->last, "head outside the log");
  }
  const jbd2::DecoderTotals t = d.totals(now);
  const jbd2::DecoderTotals& s = r.seen;
  expect(t.transactions == s.transactions && t.commit_blocks == s.transactions, "transactions != commit events");
  expect(t.descriptor_blocks == s.descriptor_blocks, "descriptor blocks != descriptor events");
  expect(t.logged_blocks == s.logged_blocks && t.escaped_blocks == s.escaped_blocks, "logged blocks != events");
  expect(t.metadata_blocks == s.metadata_blocks && t.data_blocks == s.data_blocks, "kinds != events");
  expect(t.revoke_blocks == s.revoke_blocks && t.revoked == s.revoked, "revokes != revoke events");
  expect(t.fast_commit_blocks == s.fast_commit_blocks, "fast-commit blocks != events");
  expect(t.superblock_writes == s.superblock_writes, "superblock writes != events");
  expect(t.problems == s.problems && t.checksum_errors == s.checksum_errors, "problems != problem events");
  expect(t.log_bytes == s.log_bytes, "log bytes != the commits' bytes");
  expect(t.full_time >= 0 && t.longest_full >= 0 && t.longest_full <= t.full_time, "full time inconsistent");
}

// Whether a superblock in the image claims more blocks than the fuzz allows.
bool too_large(const nvj::test::SparseImage& image, const std::vector<std::uint64_t>& offsets) {
  for (const std::uint64_t o : offsets) {
    if (o + jbd2::kSuperblockSize > image.size()) continue;
    std::uint8_t head[0x14];
    image.read(o, head);
    if (fscore::load_be<std::uint32_t>(head) == jbd2::kMagic && fscore::load_be<std::uint32_t>(head + 0x10) > kMaxFuzzBlocks)
      return true;
  }
  return false;
}

void run(const std::uint8_t* data, std::size_t size) {
  if (size < kHeaderSize) return;
  const JournalChoice& j = journals()[data[0] % journals().size()];
  const std::uint8_t flags = data[1];
  nvj::test::SparseImage image(std::uint64_t{j.sb.maxlen} * j.sb.block_size);
  if ((flags & kFlagSuperblockPresent) != 0) {
    std::uint8_t raw[jbd2::kSuperblockSize];
    encode_journal_superblock(j.sb, raw);
    image.write(j.superblock_offset, raw);
  }
  const std::vector<std::uint64_t> offsets =
      j.superblock_offset == 0 ? std::vector<std::uint64_t>{0} : std::vector<std::uint64_t>{2048, 4096};
  Recorder events;
  events.oracle = (flags & kFlagOracle) != 0;
  const Oracle oracle;
  jbd2::JournalDecoder decoder(image, events, offsets, events.oracle ? &oracle : nullptr);
  events.decoder = &decoder;

  jbd2::Nanos now = 1'000'000'000;
  std::vector<std::uint8_t> old;
  for (std::size_t at = kHeaderSize; at < size;) {
    const std::uint8_t op = data[at] % 2;
    if (op == kFlush) {
      if (size - at < kFlushSize) break;
      now += static_cast<std::int32_t>(fscore::load_le<std::uint32_t>(data + at + 1));
      at += kFlushSize;
      decoder.flush(now);
      check(decoder, events, now);
      continue;
    }
    if (size - at < kWriteHeaderSize) break;
    const std::uint64_t offset = fscore::load_le<std::uint64_t>(data + at + 1);
    std::size_t length = fscore::load_le<std::uint32_t>(data + at + 9);
    const bool fua = (data[at + 13] & 1) != 0;
    now += static_cast<std::int32_t>(fscore::load_le<std::uint32_t>(data + at + 14));
    const jbd2::Nanos completed = now + static_cast<std::int32_t>(fscore::load_le<std::uint32_t>(data + at + 18));
    at += kWriteHeaderSize;
    length = std::min(length, size - at);
    const std::uint8_t* bytes = data + at;
    at += length;
    if (offset >= image.size()) continue;
    length = static_cast<std::size_t>(std::min<std::uint64_t>(length, image.size() - offset));
    const std::span<const std::uint8_t> w(bytes, length);
    old.resize(length);
    image.read(offset, old);
    image.write(offset, w);
    if (too_large(image, offsets)) {
      image.write(offset, old);
      ++g_outcome.dropped_writes;
      continue;
    }
    ++g_outcome.writes;
    decoder.write(jbd2::LogWrite{offset, w, fua, now, completed});
    check(decoder, events, now);
  }
  check(decoder, events, now + 1'000'000);
  ++g_outcome.inputs;
  g_outcome.transactions += events.seen.transactions;
  g_outcome.logged_blocks += events.seen.logged_blocks;
  g_outcome.problems += events.seen.problems;
  if (decoder.synchronized()) ++g_outcome.synchronized_at_end;
}

}  // namespace

const std::vector<JournalChoice>& journals() {
  using namespace jbd2::feature;
  static const std::vector<JournalChoice> all = [] {
    std::vector<JournalChoice> v;
    v.push_back(choice(4096, 1024, kIncompatRevoke, 0, 1));
    v.push_back(choice(4096, 512, kIncompatRevoke | kIncompat64bit | kIncompatCsumV3, 0, 2));
    v.push_back(choice(1024, 2048, kIncompatRevoke | kIncompatCsumV2, 0, 3));
    v.push_back(choice(1024, 256, kIncompatRevoke | kIncompat64bit, kCompatChecksum, 4));
    v.push_back(choice(4096, 128, kIncompatRevoke | kIncompatAsyncCommit | kIncompatCsumV3, 0, 5));
    v.push_back(choice(4096, 48, kIncompatRevoke | kIncompatCsumV3, 0, 6));
    v.push_back(choice(1024, 40, kIncompatRevoke, 0, 7));
    v.push_back(choice(4096, 512, kIncompatRevoke | kIncompatCsumV3 | kIncompatFastCommit, 0, 8));
    v.push_back(choice(4096, 1024, kIncompatRevoke | kIncompat64bit | kIncompatCsumV3, 0, 9, 4096));
    v.push_back(choice(1024, 512, kIncompatRevoke | kIncompatCsumV2, 0, 10, 2048));
    JournalChoice v1 = choice(1024, 128, 0, 0, 11);
    v1.sb.blocktype = 3;  // a version 1 superblock: no features
    v.push_back(v1);
    return v;
  }();
  return all;
}

const Outcome& outcome() { return g_outcome; }

}  // namespace nvj::fuzz::decoder

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  nvj::fuzz::decoder::run(data, size);
  return 0;
}
