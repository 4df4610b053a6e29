// SPDX-License-Identifier: BSD-3-Clause
// XFS log records (fscore/xfs/): headers parsed field by field, the CRC
// over header, extended headers and stamped data, and a scan of a small
// log ring: records in block order, one that wraps past the end, a stale
// one a later cycle wrote over, the head and tail from the newest. The
// records here are built by the test; tests/integration/xfs_log_test.sh
// checks the same code against logs the kernel wrote and xfs_logprint read.
#include <catch2/catch.hpp>

#include <cstdint>
#include <vector>

#include "fscore/crc32c.h"
#include "fscore/endian.h"
#include "fscore/xfs/log_record.h"
#include "fscore/xfs/log_scan.h"
#include "tests/support/xfs_record_builder.h"

namespace xfs_log_test {

using namespace fscore::xfs;

namespace {

using Bytes = std::vector<std::uint8_t>;

class BufferSource final : public fscore::BlockSource {
 public:
  explicit BufferSource(Bytes& bytes) : bytes_(bytes) {}
  std::uint64_t size() const override { return bytes_.size(); }
  void read(std::uint64_t offset, std::span<std::uint8_t> out) const override {
    std::copy_n(bytes_.begin() + static_cast<std::ptrdiff_t>(offset), out.size(), out.begin());
  }

 private:
  Bytes& bytes_;
};

// A record as the kernel writes it: header blocks (one per 32 KiB of
// `size`), then `len` bytes of data filled with `fill`, every block's first
// word saved in the cycle data and stamped with the cycle; the CRC as
// xlog_cksum computes it.
Bytes make_record(std::uint32_t cycle, std::uint32_t block, std::uint32_t len, std::uint64_t tail,
                  std::uint32_t ops, std::uint32_t size, std::uint8_t fill) {
  const std::uint32_t hblocks = size > kCycleSpan ? (size + kCycleSpan - 1) / kCycleSpan : 1;
  const std::uint32_t dblocks = (len + 511) / 512;
  Bytes r(std::size_t{hblocks + dblocks} * 512, 0);
  std::uint8_t* h = r.data();
  fscore::store_be<std::uint32_t>(h + 0, kLogMagic);
  fscore::store_be<std::uint32_t>(h + 4, cycle);
  fscore::store_be<std::uint32_t>(h + 8, 2);
  fscore::store_be<std::uint32_t>(h + 12, len);
  fscore::store_be<std::uint64_t>(h + 16, std::uint64_t{cycle} << 32 | block);
  fscore::store_be<std::uint64_t>(h + 24, tail);
  fscore::store_be<std::uint32_t>(h + 36, block - 1);
  fscore::store_be<std::uint32_t>(h + 40, ops);
  fscore::store_be<std::uint32_t>(h + 300, 1);
  fscore::store_be<std::uint32_t>(h + 320, size);
  for (std::uint32_t j = 1; j < hblocks; ++j) fscore::store_be<std::uint32_t>(h + j * 512, cycle);
  for (std::uint32_t i = 0; i < dblocks; ++i) {
    std::uint8_t* d = r.data() + std::size_t{hblocks + i} * 512;
    std::fill_n(d, 512, static_cast<std::uint8_t>(fill + i));
    std::uint8_t* slot = i < 64 ? h + 44 + i * 4 : h + (i / 64) * 512 + 4 + (i % 64) * 4;
    std::copy_n(d, 4, slot);
    fscore::store_be<std::uint32_t>(d, cycle);
  }
  std::uint32_t crc = fscore::crc32c(~0u, h, 328);  // the CRC field is 0 here
  for (std::uint32_t j = 1; j < std::min<std::uint32_t>((len + kCycleSpan - 1) / kCycleSpan, hblocks); ++j)
    crc = fscore::crc32c(crc, h + j * 512, 260);
  crc = fscore::crc32c(crc, r.data() + std::size_t{hblocks} * 512, len);
  fscore::store_le<std::uint32_t>(h + 32, ~crc);
  return r;
}

void place(Bytes& log, std::uint64_t block, const Bytes& record) {
  const std::uint64_t blocks = log.size() / 512;
  for (std::size_t i = 0; i < record.size() / 512; ++i)
    std::copy_n(record.begin() + static_cast<std::ptrdiff_t>(i * 512), 512,
                log.begin() + static_cast<std::ptrdiff_t>(((block + i) % blocks) * 512));
}

}  // namespace

TEST_CASE("an XFS log record header reads back field by field, its CRC checked", "[xfs]") {
  Bytes r = make_record(7, 100, 1000, std::uint64_t{6} << 32 | 40, 12, 32768, 'a');
  const auto h = parse_record_header(r);
  REQUIRE(h.has_value());
  CHECK(h->cycle == 7);
  CHECK(h->version == 2);
  CHECK(h->len == 1000);
  CHECK(h->lsn == Lsn{7, 100});
  CHECK(h->tail == Lsn{6, 40});
  CHECK(to_string(h->tail) == "6:40");
  CHECK(h->prev_block == 99);
  CHECK(h->operations == 12);
  CHECK(h->format == 1);
  CHECK(h->size == 32768);
  CHECK(header_blocks(*h) == 1);
  CHECK(data_blocks(*h) == 2);
  CHECK(check_record_crc(*h, r) == CrcCheck::ok);

  Bytes damaged = r;
  damaged[512 + 100] ^= 1;  // a data byte
  CHECK(check_record_crc(*h, damaged) == CrcCheck::bad);
  damaged = r;
  damaged[40] ^= 1;  // the operation count, in the header
  CHECK(check_record_crc(*parse_record_header(damaged), damaged) == CrcCheck::bad);
  fscore::store_le<std::uint32_t>(r.data() + 32, 0);  // as mkfs writes it
  CHECK(check_record_crc(*parse_record_header(r), r) == CrcCheck::absent);

  Bytes not_header = r;
  not_header[0] = 0;
  CHECK_FALSE(parse_record_header(not_header).has_value());
  fscore::store_be<std::uint32_t>(not_header.data(), kLogMagic);
  fscore::store_be<std::uint32_t>(not_header.data() + 8, 3);  // no such version
  CHECK_FALSE(parse_record_header(not_header).has_value());
  CHECK_FALSE(parse_record_header(std::span(r.data(), 100)).has_value());
}

TEST_CASE("a record from a 64 KiB log buffer has two header blocks, and its CRC covers the second", "[xfs]") {
  Bytes r = make_record(3, 8, 40000, std::uint64_t{3} << 32, 5, 65536, 'x');  // 79 data blocks
  const auto h = parse_record_header(r);
  REQUIRE(h.has_value());
  CHECK(header_blocks(*h) == 2);
  CHECK(data_blocks(*h) == 79);
  CHECK(check_record_crc(*h, r) == CrcCheck::ok);
  r[512 + 100] ^= 1;  // a saved first word of data block 64+, in the extended header
  CHECK(check_record_crc(*h, r) == CrcCheck::bad);
}

TEST_CASE("a log scan finds records in block order, one wrapped, one stale, one torn, and the newest", "[xfs]") {
  Bytes log(64 * 512, 0);
  BufferSource source(log);
  // A record of cycle 1 at block 56 whose data ran past the end: blocks
  // 57..63 stamped 1, then 0..2 stamped 2 (as the kernel stamps a wrapped
  // record; its CRC is over what is on disk).
  Bytes wrapped = make_record(1, 56, 10 * 512, std::uint64_t{1} << 32 | 30, 7, 32768, 'w');
  for (std::size_t i = 8; i <= 10; ++i) fscore::store_be<std::uint32_t>(wrapped.data() + i * 512, 2);
  {
    std::uint32_t crc = fscore::crc32c(~0u, wrapped.data(), 32);
    crc = fscore::crc32c(crc, "\0\0\0\0", 4);
    crc = fscore::crc32c(crc, wrapped.data() + 36, 328 - 36);
    crc = fscore::crc32c(crc, wrapped.data() + 512, 10 * 512);
    fscore::store_le<std::uint32_t>(wrapped.data() + 32, ~crc);
  }
  place(log, 56, wrapped);
  place(log, 20, make_record(2, 20, 3 * 512, std::uint64_t{1} << 32 | 56, 2, 32768, 'b'));  // 20..23
  place(log, 24, make_record(2, 24, 2 * 512, std::uint64_t{2} << 32 | 20, 3, 32768, 'c'));  // 24..26

  LogScan scan = scan_log(source, log.size());
  REQUIRE(scan.records.size() == 3);
  CHECK(scan.records[2].block == 56);
  CHECK(scan.records[2].crc == CrcCheck::ok);  // wrapped, whole
  CHECK_FALSE(scan.records[2].overwritten);
  REQUIRE(scan.newest.has_value());
  CHECK(scan.records[*scan.newest].block == 24);
  CHECK(scan.head == Lsn{2, 27});
  CHECK(scan.tail == Lsn{2, 20});

  // Cycle 3 writes from block 0 over the wrapped record's tail (a stale
  // record: its header is still there); a record at 5 was torn by a power
  // cut, its last block never written (it holds cycle 2's bytes).
  place(log, 0, make_record(3, 0, 4 * 512, std::uint64_t{2} << 32 | 24, 6, 32768, 'd'));  // 0..4
  Bytes torn = make_record(3, 5, 3 * 512, std::uint64_t{3} << 32, 1, 32768, 'e');      // 5..8
  fscore::store_be<std::uint32_t>(torn.data() + 3 * 512, 2);
  place(log, 5, torn);
  scan = scan_log(source, log.size());
  std::vector<std::uint64_t> blocks;
  for (const auto& r : scan.records) blocks.push_back(r.block);
  CHECK(blocks == std::vector<std::uint64_t>{0, 5, 20, 24, 56});
  CHECK(scan.records[0].crc == CrcCheck::ok);
  CHECK((scan.records[1].crc == CrcCheck::bad && !scan.records[1].overwritten));  // torn: a fault
  CHECK((scan.records[4].crc == CrcCheck::bad && scan.records[4].overwritten));   // stale: not one
  CHECK(scan.crc_failures == 1);
  REQUIRE(scan.newest.has_value());
  CHECK(scan.records[*scan.newest].block == 0);  // the torn one is not the newest
  CHECK(scan.head == Lsn{3, 5});
  CHECK(scan.tail == Lsn{2, 24});
  CHECK_THROWS_WITH(scan_log(source, log.size() + 512), Catch::Contains("its device only"));
}

TEST_CASE("the record builder makes what the kernel would write: the test's own records, byte for byte", "[xfs]") {
  for (const std::uint32_t size : {32768u, 65536u, 262144u}) {
    const std::uint32_t len = size == 32768 ? 1024 : 40960;  // whole blocks: the test fills a last block whole
    Bytes data(len);
    for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<std::uint8_t>('a' + i / 512);
    const Bytes built = build_record({7, 100, {6, 40}, 12, size, true}, data);
    CHECK(built == make_record(7, 100, len, std::uint64_t{6} << 32 | 40, 12, size, 'a'));
  }
  // Wrapping: blocks past the log's end carry the next cycle, and the CRC
  // is over them as stamped.
  Bytes log(16 * 512, 0);
  BufferSource source(log);
  const Bytes data(6 * 512, 'z');
  place_record(log, 12, build_record({4, 12, {4, 3}, 2, 32768, true}, data, 16));
  const LogScan scan = scan_log(source, log.size());
  REQUIRE(scan.records.size() == 1);
  CHECK(scan.records[0].crc == CrcCheck::ok);
  CHECK(fscore::load_be<std::uint32_t>(log.data() + 2 * 512) == 5);  // data block 5 at block 2: cycle 5
  CHECK(scan.head == Lsn{5, 3});
  CHECK_THROWS(build_record({0, 0, {}, 0, 32768, true}, data));
  CHECK_THROWS(build_record({1, 0, {}, 0, 32768, true}, Bytes(40000)));  // 79 blocks, one header block
}

}  // namespace xfs_log_test
