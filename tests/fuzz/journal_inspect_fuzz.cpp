// SPDX-License-Identifier: BSD-3-Clause
// Fuzz target: fscore::jbd2::scan_journal and replay_journal, as the
// journal inspector runs them, on untrusted journals (input format in
// journal_inspect_fuzz.h), replaying into a filesystem in memory. A journal
// superblock that does not decode is refused (the inspector refuses it), a
// fast-commit journal is refused by scan_journal; anything else must scan
// and replay. A crash, a sanitizer report, a hang, or a replay that breaks
// what recovery promises (writes at or past fs_blocks, more blocks than the
// log holds, writes after a failed scan) is a finding, and aborts.
#include "tests/fuzz/journal_inspect_fuzz.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "fscore/endian.h"
#include "fscore/jbd2/journal_log.h"
#include "fscore/jbd2/journal_recovery.h"
#include "fscore/jbd2/journal_superblock.h"
#include "tests/support/sparse_image.h"

namespace nvj::fuzz::inspect {
namespace {

namespace jbd2 = fscore::jbd2;

Outcome g_outcome;

[[noreturn]] void finding(const char* what) {
  std::fprintf(stderr, "journal_inspect_fuzz: %s\n", what);
  std::abort();
}

void expect(bool ok, const char* what) {
  if (!ok) finding(what);
}

void check(const jbd2::JournalSuperblock& sb, const jbd2::JournalScan& scan, const jbd2::ReplayResult& r,
           const nvj::test::SparseImage& fs, std::uint64_t fs_blocks) {
  expect(scan.needs_recovery == (sb.start != 0), "needs_recovery is not s_start != 0");
  std::uint64_t tags = 0;
  for (const jbd2::ScannedTransaction& tx : scan.transactions) {
    expect(tx.first_log_block < sb.maxlen, "a transaction starts past the journal");
    expect(!tx.commit_log_block || *tx.commit_log_block < sb.maxlen, "a commit block past the journal");
    expect(!tx.replayed || (scan.error == 0 && tx.commit_log_block), "an uncommitted transaction replayed");
    tags += tx.logged_blocks;
  }
  if (!scan.needs_recovery) expect(scan.transactions.empty() && scan.error == 0, "a clean journal scanned");
  expect(r.written.size() == r.replayed, "written blocks != replayed");
  for (const std::uint64_t b : r.written) expect(b < fs_blocks, "replayed a block at or past fs_blocks");
  expect(r.replayed <= tags, "replayed more blocks than the log holds");
  expect(std::uint64_t{r.replayed} + r.revoke_hits + r.bad_checksums <= tags, "more tag outcomes than tags");
  expect(fs.bytes_written() == std::uint64_t{r.replayed} * sb.block_size, "bytes written != replayed blocks");
  if (scan.error != 0) expect(r.error == scan.error && r.replayed == 0, "replayed after a failed scan");
  if (!scan.needs_recovery) expect(r.error == 0 && r.replayed == 0, "replayed a clean journal");
  expect(r.error == 0 || r.error == jbd2::kErrIo || r.error == jbd2::kErrBadCrc || r.error == jbd2::kErrCorrupted ||
             r.error == 22,
         "replay failed with an unknown error");
}

void run(const std::uint8_t* data, std::size_t size) {
  if (size < kHeaderSize || std::memcmp(data, kMagic, sizeof kMagic) != 0) return;
  ++g_outcome.inputs;
  const std::uint64_t device_size = std::min(fscore::load_le<std::uint64_t>(data + 8), kMaxDeviceBytes);
  std::uint32_t bs = fscore::load_le<std::uint32_t>(data + 16);
  if (bs < 1024 || bs > 65536 || (bs & (bs - 1)) != 0) bs = 4096;
  const std::uint64_t fs_blocks = std::min<std::uint64_t>(fscore::load_le<std::uint32_t>(data + 20), kMaxFsBytes / bs);
  const std::size_t nruns = data[24] % (kMaxRuns + 1);
  std::size_t at = kHeaderSize;
  if (size - at < nruns * kRunSize) return;
  const std::uint64_t device_blocks = device_size / bs;
  std::vector<jbd2::LogRun> runs;
  std::uint64_t run_total = 0;
  for (std::size_t i = 0; i < nruns; ++i, at += kRunSize) {
    jbd2::LogRun r{fscore::load_le<std::uint64_t>(data + at), fscore::load_le<std::uint32_t>(data + at + 8)};
    if (r.first_block >= device_blocks) continue;
    r.count = std::min(r.count, device_blocks - r.first_block);
    if (r.count == 0) continue;
    runs.push_back(r);
    run_total += r.count;
  }
  nvj::test::SparseImage device(device_size, 1024);
  while (size - at >= kRecordHeaderSize) {
    const std::uint64_t offset = fscore::load_le<std::uint64_t>(data + at);
    std::size_t length = std::min<std::size_t>(fscore::load_le<std::uint32_t>(data + at + 8), size - at - kRecordHeaderSize);
    at += kRecordHeaderSize;
    if (offset < device_size) {
      const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(length, device_size - offset));
      device.write(offset, std::span<const std::uint8_t>(data + at, n));
    }
    at += length;
  }

  // The superblock, as the inspector reads it: the journal's first block.
  const std::uint64_t sb_offset = runs.empty() ? 0 : runs.front().first_block * bs;
  jbd2::JournalSuperblock sb;
  try {
    if (sb_offset + jbd2::kSuperblockSize > device_size) throw std::runtime_error("no room for a superblock");
    std::uint8_t raw[jbd2::kSuperblockSize];
    device.read(sb_offset, raw);
    sb = jbd2::decode_journal_superblock(raw);
  } catch (const std::runtime_error&) {
    ++g_outcome.refused;
    return;
  }
  if (sb.block_size != bs || (!runs.empty() && sb.maxlen > run_total)) {
    ++g_outcome.refused;
    return;
  }
  const jbd2::JournalLog log(device, bs, sb.maxlen, runs);
  jbd2::JournalScan scan;
  try {
    scan = jbd2::scan_journal(log, sb);
  } catch (const std::invalid_argument&) {
    expect((sb.feature_incompat & jbd2::feature::kIncompatFastCommit) != 0, "scan refused a journal without fast commit");
    ++g_outcome.fast_commit;
    return;
  }
  nvj::test::SparseImage fs(fs_blocks * bs);
  const jbd2::ReplayResult r = jbd2::replay_journal(log, sb, scan, fs, fs_blocks);
  check(sb, scan, r, fs, fs_blocks);
  if (!scan.needs_recovery) ++g_outcome.clean;
  if (scan.error != 0) ++g_outcome.scan_errors;
  if (r.error == 0) ++g_outcome.replays;
  else ++g_outcome.replay_errors;
  if (r.error == 22) ++g_outcome.einval;
  g_outcome.replayed_blocks += r.replayed;
}

}  // namespace

const Outcome& outcome() { return g_outcome; }

}  // namespace nvj::fuzz::inspect

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  nvj::fuzz::inspect::run(data, size);
  return 0;
}
