// SPDX-License-Identifier: BSD-3-Clause
// journal_replay: writes a realistic jbd2 log (bench/journal_workload.h) to
// an NBD export holding a journal, 4 KiB per request, with DEPTH requests in
// flight, so that a server decoding the journal decodes real transactions.
//
// Usage: journal_replay URI [--depth N] [--seconds S | --writes N]
//                           [--wraps W] [--target-blocks N] [--seed N]
//                           [--keep-features]
//
// The log is built for the journal the export holds: its jbd2 superblock
// (at block 1024/bs + 1 of a journal device, or at 0) gives the block size,
// the uuid and the length. The features are those ext4 with metadata_csum
// and 64bit sets when it mounts (revoke, 64bit, csum v3 with crc32c; the
// first superblock update carries them), unless --keep-features. Superblock updates (the mount's first commit, each
// checkpoint's tail move, the clean unmount) are sent as the kernel sends
// them: after every earlier write has completed, with FUA when the server
// offers it, and waited for. After a session (W wraps of the log) the next
// one starts over: a remount. It stops after S seconds or after exactly N
// writes (a deterministic amount of work, for instruction counts), waiting
// for the writes in flight, and prints one line:
//   writes N seconds S iops X
#include <libnbd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench/journal_workload.h"
#include "fscore/jbd2/journal_superblock.h"

namespace {

using namespace fscore::jbd2;

[[noreturn]] void usage(int code) {
  std::fputs(
      "Usage: journal_replay URI [--depth N] [--seconds S | --writes N]\n"
      "                          [--wraps W] [--target-blocks N] [--seed N]\n"
      "                          [--keep-features]\n",
      code == 0 ? stdout : stderr);
  std::exit(code);
}

[[noreturn]] void die(const std::string& what) {
  std::fprintf(stderr, "journal_replay: %s\n", what.c_str());
  std::exit(1);
}

struct State {
  nbd_handle* h = nullptr;
  std::uint64_t completed = 0;
  int failed = 0;
};

int on_done(void* user, int* error) {
  auto* s = static_cast<State*>(user);
  if (*error != 0) ++s->failed;
  ++s->completed;
  return 1;  // retire the command
}

void poll_once(State& st) {
  if (nbd_poll(st.h, -1) == -1) die(std::string("nbd_poll: ") + nbd_get_error());
  if (st.failed != 0) die("a write failed");
}

void drain(State& st) {
  while (nbd_aio_in_flight(st.h) > 0) poll_once(st);
}

}  // namespace

int main(int argc, char** argv) {
  std::string uri;
  int depth = 16;
  double seconds = 0;
  std::uint64_t writes = 0;
  bool keep_features = false;
  nvj::bench::SessionShape shape;
  shape.wraps = 2;
  shape.target_blocks = 262144;  // a 1 GiB filesystem of 4 KiB blocks
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "-h" || a == "--help") usage(0);
    if (a == "--keep-features") {
      keep_features = true;
      continue;
    }
    if (a.rfind("-", 0) != 0) {
      if (!uri.empty()) usage(2);
      uri = a;
      continue;
    }
    if (i + 1 >= argc) usage(2);
    const char* v = argv[++i];
    if (a == "--depth") depth = std::atoi(v);
    else if (a == "--seconds") seconds = std::strtod(v, nullptr);
    else if (a == "--writes") writes = std::strtoull(v, nullptr, 10);
    else if (a == "--wraps") shape.wraps = std::strtod(v, nullptr);
    else if (a == "--target-blocks") shape.target_blocks = std::strtoull(v, nullptr, 10);
    else if (a == "--seed") shape.seed = std::strtoull(v, nullptr, 10);
    else usage(2);
  }
  if (uri.empty() || depth < 1 || depth > 256 || (seconds <= 0) == (writes == 0) || shape.wraps <= 0 ||
      shape.target_blocks == 0)
    usage(2);

  State st;
  st.h = nbd_create();
  if (st.h == nullptr || nbd_connect_uri(st.h, uri.c_str()) == -1) die(std::string("connect: ") + nbd_get_error());
  const std::int64_t size = nbd_get_size(st.h);
  if (size < 0) die(std::string("size: ") + nbd_get_error());
  const bool fua = nbd_can_fua(st.h) == 1;

  // The journal's superblock, where a journal device (or a bare journal) has it.
  std::vector<std::uint8_t> head(static_cast<std::size_t>(std::min<std::int64_t>(size, 128 * 1024)));
  if (nbd_pread(st.h, head.data(), head.size(), 0, 0) == -1) die(std::string("read: ") + nbd_get_error());
  JournalSuperblock sb;
  std::uint64_t sb_offset = 0;
  bool found = false;
  for (std::uint64_t offset : {2048ull, 4096ull, 8192ull, 16384ull, 32768ull, 65536ull, 0ull}) {
    if (offset + kSuperblockSize > head.size()) continue;
    try {
      sb = decode_journal_superblock(std::span<const std::uint8_t, kSuperblockSize>(head.data() + offset,
                                                                                  kSuperblockSize));
    } catch (const std::runtime_error&) {
      continue;
    }
    if (offset != 0 && offset != std::uint64_t{sb.block_size} * (1024 / sb.block_size + 1)) continue;
    sb_offset = offset;
    found = true;
    break;
  }
  if (!found) die("no jbd2 superblock on " + uri);
  if (std::uint64_t{sb.maxlen} * sb.block_size > static_cast<std::uint64_t>(size)) die("the journal is larger than the export");
  if (!keep_features) {
    sb.feature_incompat |= feature::kIncompatRevoke | feature::kIncompat64bit | feature::kIncompatCsumV3;
    sb.feature_incompat &= ~feature::kIncompatCsumV2;
    sb.feature_compat &= ~feature::kCompatChecksum;
    sb.checksum_type = 4;
  }
  const std::uint32_t bs = sb.block_size;
  std::vector<std::uint8_t> sb_block(bs);
  if (nbd_pread(st.h, sb_block.data(), bs, sb_offset / bs * bs, 0) == -1) die(std::string("read: ") + nbd_get_error());

  const nvj::bench::JournalSession session = nvj::bench::build_session(sb, sb_offset, sb_block, shape);
  std::fprintf(stderr,
               "journal_replay: %u blocks of %u bytes, superblock at %llu, features 0x%x; session of %zu writes, "
               "%llu transactions; depth %d\n",
               sb.maxlen, bs, static_cast<unsigned long long>(sb_offset), sb.feature_incompat, session.writes.size(),
               static_cast<unsigned long long>(session.transactions), depth);

  nbd_completion_callback cb{};
  cb.callback = on_done;
  cb.user_data = &st;
  const auto start = std::chrono::steady_clock::now();
  const auto deadline = start + std::chrono::duration<double>(seconds);
  std::uint64_t issued = 0;
  std::size_t next = 0;
  auto more = [&] {
    if (writes != 0) return issued < writes;
    return (issued & 63) != 0 || std::chrono::steady_clock::now() < deadline;
  };
  while (more()) {
    const nvj::bench::JournalWrite& w = session.writes[next];
    next = next + 1 == session.writes.size() ? 0 : next + 1;
    const auto bytes = session.bytes(w);
    if (w.superblock) drain(st);
    while (nbd_aio_in_flight(st.h) >= depth) poll_once(st);
    if (nbd_aio_pwrite(st.h, bytes.data(), bytes.size(), w.offset, cb, w.superblock && fua ? LIBNBD_CMD_FLAG_FUA : 0) ==
        -1)
      die(std::string("write: ") + nbd_get_error());
    ++issued;
    if (w.superblock) drain(st);
  }
  drain(st);
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  nbd_shutdown(st.h, 0);
  nbd_close(st.h);
  std::printf("writes %llu seconds %.3f iops %.0f\n", static_cast<unsigned long long>(st.completed), elapsed,
              static_cast<double>(st.completed) / elapsed);
  return 0;
}
