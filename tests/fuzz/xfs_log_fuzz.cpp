// SPDX-License-Identifier: BSD-3-Clause
// Fuzz target: fscore::xfs::scan_log, as nvj journal inspect runs it, and
// fscore::xfs::LogFollower, as the server's tracer runs it, on untrusted
// logs (input format in xfs_log_fuzz.h). Any log must scan, and must be
// followed when written in order in pieces of 1 to 64 blocks (sizes taken
// from the input's own bytes; FUA and flushes among them). A crash, a
// sanitizer report, a hang, or a result that breaks what it promises is a
// finding, and aborts. The scan: records in block order inside the log,
// each a header that parses again where it was found, failures only where
// a CRC is bad and no later cycle wrote over the record, a newest record
// whose CRC holds and which no whole record outranks, and a head inside the
// log. The follower: every record it reports whole is one the scan found at
// the same block with the same CRC verdict (each block is written once, so
// both read the same bytes), its totals add up, no more records durable
// than whole, its head inside the log and its fill between 0 and 1.
#include "tests/fuzz/xfs_log_fuzz.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <span>
#include <vector>

#include "fscore/xfs/log_follower.h"
#include "fscore/xfs/log_scan.h"

namespace nvj::fuzz::xfs_log {
namespace {

namespace xfs = fscore::xfs;

Outcome g_outcome;

[[noreturn]] void finding(const char* what) {
  std::fprintf(stderr, "xfs_log_fuzz: %s\n", what);
  std::abort();
}

class Bytes final : public fscore::BlockSource {
 public:
  Bytes(const std::uint8_t* data, std::size_t size) : data_(data), size_(size) {}
  std::uint64_t size() const override { return size_; }
  void read(std::uint64_t offset, std::span<std::uint8_t> out) const override {
    if (offset > size_ || out.size() > size_ - offset) finding("a read past the log's end");
    std::copy_n(data_ + offset, out.size(), out.begin());
  }

 private:
  const std::uint8_t* data_;
  std::size_t size_;
};

struct Followed final : fscore::xfs::FollowerEvents {
  std::vector<fscore::xfs::FollowedRecord> records;
  void on_record(const fscore::xfs::FollowedRecord& r) override { records.push_back(r); }
};

// The log written to a follower in order, in pieces sized by its own bytes.
void follow(const std::uint8_t* data, std::size_t bytes, const Bytes& log, const xfs::LogScan& scan) {
  const std::uint64_t blocks = bytes / xfs::kBasicBlock;
  Followed seen;
  xfs::LogFollower follower(log, blocks, seen);
  std::uint64_t at = 0, k = 0;
  xfs::Nanos t = 0;
  while (at < blocks) {
    const std::uint64_t n = std::min<std::uint64_t>(blocks - at, 1 + data[(k * 131) % bytes] % 64);
    follower.write({at * xfs::kBasicBlock, std::span(data + at * xfs::kBasicBlock, n * xfs::kBasicBlock), (k & 1) != 0,
                    t, t + 1});
    t += 2;
    at += n;
    if (++k % 5 == 0) follower.flush(t, t + 1);
  }
  const xfs::FollowerTotals& f = follower.totals();
  if (f.records != seen.records.size() || f.crc_ok + f.crc_bad + f.crc_absent != f.records)
    finding("the follower's totals do not add up");
  if (f.durable > f.records) finding("more records durable than whole");
  if (f.log_writes != k || f.log_bytes != bytes) finding("the follower's writes miscounted");
  for (const xfs::FollowedRecord& r : seen.records) {
    const auto it = std::find_if(scan.records.begin(), scan.records.end(),
                                 [&](const xfs::ScannedRecord& s) { return s.block == r.header.lsn.block; });
    if (it == scan.records.end()) finding("the follower found a record the scan did not");
    if (it->crc != r.crc) finding("the follower and the scan disagree on a record's CRC");
    if (r.blocks != xfs::header_blocks(r.header) + xfs::data_blocks(r.header)) finding("a record's blocks");
  }
  if (follower.synchronized() && follower.head().block >= blocks) finding("the follower's head outside the log");
  if (follower.fill() < 0 || follower.fill() > 1) finding("the follower's fill");
  g_outcome.followed += seen.records.size();
}

}  // namespace

const Outcome& outcome() { return g_outcome; }

}  // namespace nvj::fuzz::xfs_log

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace nvj::fuzz::xfs_log;
  namespace xfs = fscore::xfs;
  ++g_outcome.inputs;
  const std::size_t bytes = std::min(size, kMaxLogBytes) / xfs::kBasicBlock * xfs::kBasicBlock;
  const Bytes log(data, bytes);
  const xfs::LogScan scan = xfs::scan_log(log, bytes);
  if (scan.log_blocks != bytes / xfs::kBasicBlock) finding("the log's length");
  std::uint64_t failures = 0;
  for (std::size_t i = 0; i < scan.records.size(); ++i) {
    const xfs::ScannedRecord& r = scan.records[i];
    if (r.block >= scan.log_blocks) finding("a record outside the log");
    if (i > 0 && r.block <= scan.records[i - 1].block) finding("records out of block order");
    const auto again = xfs::parse_record_header(std::span(data + r.block * xfs::kBasicBlock, xfs::kBasicBlock));
    if (!again || again->lsn != r.header.lsn || again->len != r.header.len) finding("a record that is not its block's header");
    failures += r.crc == xfs::CrcCheck::bad && !r.overwritten;
    g_outcome.crc_ok += r.crc == xfs::CrcCheck::ok;
    g_outcome.stale += r.overwritten;
  }
  if (failures != scan.crc_failures) finding("the CRC failures miscounted");
  g_outcome.records += scan.records.size();
  g_outcome.crc_failures += scan.crc_failures;
  if (scan.newest) {
    ++g_outcome.with_head;
    const xfs::ScannedRecord& n = scan.records.at(*scan.newest);
    if (n.crc == xfs::CrcCheck::bad || n.overwritten) finding("a newest record that is not whole");
    for (const xfs::ScannedRecord& r : scan.records)
      if (r.crc != xfs::CrcCheck::bad && !r.overwritten && r.header.lsn > n.header.lsn)
        finding("a whole record newer than the newest");
    if (scan.head.block >= scan.log_blocks) finding("a head outside the log");
    if (scan.tail != n.header.tail) finding("the tail is not the newest record's");
  } else {
    for (const xfs::ScannedRecord& r : scan.records)
      if (r.crc != xfs::CrcCheck::bad && !r.overwritten) finding("a whole record, yet no newest");
  }
  if (bytes != 0) follow(data, bytes, log, scan);
  return 0;
}
