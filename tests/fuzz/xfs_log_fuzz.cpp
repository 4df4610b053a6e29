// Fuzz target: fscore::xfs::scan_log, as nvj journal inspect runs it, on
// untrusted logs (input format in xfs_log_fuzz.h). Any log must scan. A
// crash, a sanitizer report, a hang, or a scan that breaks what it promises
// is a finding, and aborts: records in block order inside the log, each a
// header that parses again where it was found, failures only where a CRC is
// bad and no later cycle wrote over the record, a newest record whose CRC
// holds and which no whole record outranks, and a head inside the log.
#include "tests/fuzz/xfs_log_fuzz.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <span>

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
  return 0;
}
