#include "server/probe/journal_json.h"

#include <fmt/format.h>

namespace nvj {

std::string transaction_json(const fscore::jbd2::Transaction& t, std::uint32_t block_size, Nanos epoch,
                             double fill_after) {
  auto us = [&](Nanos at) { return static_cast<double>(at - epoch) / 1e3; };
  return fmt::format(
      R"({{"tid":{},"first_write_us":{:.3f},"commit_us":{:.3f},"commit_done_us":{:.3f},"duration_us":{:.3f},)"
      R"("log_start":{},"log_blocks":{},"descriptor_blocks":{},"logged_blocks":{},"metadata_blocks":{},)"
      R"("data_blocks":{},"escaped_blocks":{},"revoke_blocks":{},"revoked_blocks":{},"bytes":{},"flushes":{},)"
      R"("fua_writes":{},"checksum_errors":{},"commit_time":"{}.{:09d}","fill_after":{:.4f}}})",
      t.tid, us(t.first_write), us(t.commit_arrived), us(t.commit_completed),
      static_cast<double>(t.duration()) / 1e3, t.first_log_block, t.log_blocks, t.descriptor_blocks,
      t.logged_blocks, t.metadata_blocks, t.data_blocks, t.escaped_blocks, t.revoke_blocks, t.revoked,
      t.bytes(block_size), t.flushes, t.fua_writes, t.checksum_errors, t.commit_seconds, t.commit_nanoseconds,
      fill_after);
}

}  // namespace nvj
