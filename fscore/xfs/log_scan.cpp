// SPDX-License-Identifier: BSD-3-Clause
#include "fscore/xfs/log_scan.h"

#include <stdexcept>
#include <string>

#include "fscore/endian.h"

namespace fscore::xfs {

namespace {

// The log's blocks [block, block + count), wrapping past its end.
std::vector<std::uint8_t> read_ring(const BlockSource& log, std::uint64_t log_blocks, std::uint64_t block,
                                    std::uint64_t count) {
  std::vector<std::uint8_t> bytes(count * kBasicBlock);
  for (std::uint64_t done = 0; done < count;) {
    const std::uint64_t at = (block + done) % log_blocks;
    const std::uint64_t n = std::min(count - done, log_blocks - at);
    log.read(at * kBasicBlock, std::span(bytes.data() + done * kBasicBlock, n * kBasicBlock));
    done += n;
  }
  return bytes;
}

}  // namespace

LogScan scan_log(const BlockSource& log, std::uint64_t log_bytes) {
  if (log_bytes > log.size())
    throw std::invalid_argument("the log is " + std::to_string(log_bytes) + " bytes, its device only " +
                                std::to_string(log.size()));
  LogScan scan;
  scan.log_blocks = log_bytes / kBasicBlock;
  if (scan.log_blocks == 0) return scan;
  constexpr std::uint64_t kChunk = 2048;  // blocks read at a time: 1 MiB
  std::vector<std::uint8_t> chunk;
  for (std::uint64_t base = 0; base < scan.log_blocks; base += kChunk) {
    const std::uint64_t n = std::min(kChunk, scan.log_blocks - base);
    chunk.resize(n * kBasicBlock);
    log.read(base * kBasicBlock, chunk);
    for (std::uint64_t i = 0; i < n; ++i) {
      const auto h = parse_record_header(std::span(chunk.data() + i * kBasicBlock, kBasicBlock));
      if (!h) continue;
      ScannedRecord r{base + i, *h, CrcCheck::absent};
      const std::uint64_t blocks = std::uint64_t{header_blocks(*h)} + data_blocks(*h);
      if (blocks <= scan.log_blocks) {
        const std::vector<std::uint8_t> bytes = read_ring(log, scan.log_blocks, r.block, blocks);
        r.crc = check_record_crc(*h, bytes);
        // Every block after the header starts with the cycle it was written
        // in: the record's, or the next past the end of the log. A later
        // cycle there is a later record's (a block still holding an earlier
        // one is a record never written whole: a fault).
        for (std::uint64_t j = 1; j < blocks && !r.overwritten; ++j) {
          const std::uint32_t want = r.block + j < scan.log_blocks ? h->cycle : h->cycle + 1;
          r.overwritten = load_be<std::uint32_t>(bytes.data() + j * kBasicBlock) > want;
        }
      } else {
        r.crc = h->crc == 0 ? CrcCheck::absent : CrcCheck::bad;  // longer than the log: not one
      }
      scan.crc_failures += r.crc == CrcCheck::bad && !r.overwritten;
      if (r.crc != CrcCheck::bad && !r.overwritten &&
          (!scan.newest || h->lsn > scan.records[*scan.newest].header.lsn))
        scan.newest = scan.records.size();
      scan.records.push_back(r);
    }
  }
  if (scan.newest) {
    const ScannedRecord& r = scan.records[*scan.newest];
    const std::uint64_t next = r.block + header_blocks(r.header) + data_blocks(r.header);
    scan.head = {r.header.cycle + (next >= scan.log_blocks ? 1u : 0u),
                 static_cast<std::uint32_t>(next % scan.log_blocks)};
    scan.tail = r.header.tail;
  }
  return scan;
}

}  // namespace fscore::xfs
