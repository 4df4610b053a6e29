// SPDX-License-Identifier: BSD-3-Clause
// Fuzz target: a dm-log-writes log as nvj crash import reads it (untrusted:
// a file from another tool). LogReader checks the super block and every
// entry, with the count and past it; a log it reads whole is imported
// (crashlab/record/log_import.h), and the recording made must read back whole
// (RecordingIndex) with as many changes, flushes and marks as the log has
// entries of each. A log is either refused with a LogError or read and
// imported; a crash, a sanitizer report, another exception or a broken
// promise is a finding, and aborts.
#include <cstdio>
#include <cstdlib>
#include <span>
#include <vector>

#include "crashlab/record/log_import.h"
#include "crashlab/index/recording_index.h"
#include "fscore/dmlog/log_reader.h"
#include "tests/fuzz/dm_log_fuzz.h"

namespace nvj::fuzz::dm_log {
namespace {

namespace dmlog = fscore::dmlog;

Outcome g_outcome;

void expect(bool ok, const char* what) {
  if (ok) return;
  std::fprintf(stderr, "dm_log_fuzz: %s\n", what);
  std::abort();
}

void check(const dmlog::LogReader& log, std::span<const std::uint8_t> bytes) {
  const std::uint64_t sector = log.super().sectorsize;
  std::uint64_t writes = 0, flushes = 0, marks = 0, previous = 0;
  for (const dmlog::Entry& e : log.entries()) {
    expect(e.log_offset >= sector && e.log_offset % sector == 0, "an entry off the log's sectors");
    expect(e.log_offset + sector + e.data.size() <= bytes.size(), "an entry past the log's end");
    expect(e.index == 0 || e.log_offset > previous, "entries out of order");
    previous = e.log_offset;
    expect(e.is(dmlog::kMark) || e.is(dmlog::kDiscard) || e.data.size() == e.header.nr_sectors * sector,
           "a write whose data is not its sectors");
    expect(!e.is(dmlog::kMark) || e.label.size() == e.header.data_len, "a mark's label is not its length");
    writes += !e.is(dmlog::kMark) && !e.data.empty() ? (e.data.size() + (64u << 20) - 1) / (64u << 20) : 0;
    writes += e.is(dmlog::kDiscard) ? (e.header.nr_sectors * sector + (1u << 30) - 1) / (1u << 30) : 0;
    flushes += e.is(dmlog::kFlush);
    marks += e.is(dmlog::kMark) && !(e.label == "dm-log-writes-end" && &e == &log.entries().back());
  }
  std::vector<std::uint8_t> recording;
  crashlab::import_logs({{"data", &log, std::max<std::uint64_t>(log.extent(), sector) / sector * sector + sector}},
                        std::nullopt, [&](std::span<const std::uint8_t> b) { recording.insert(recording.end(), b.begin(), b.end()); });
  const crashlab::RecordingIndex index(recording);
  expect(index.changes().size() == writes, "the recording's changes are not the log's writes and discards");
  expect(index.flushes().size() == flushes, "the recording's flushes are not the log's");
  expect(index.marks().size() == marks, "the recording's marks are not the log's");
  for (const auto& f : index.flushes()) expect(f.done != crashlab::kNever, "an imported flush never completes");
  g_outcome.entries += log.entries().size();
}

}  // namespace

const Outcome& outcome() { return g_outcome; }

}  // namespace nvj::fuzz::dm_log

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace nvj::fuzz::dm_log;
  ++g_outcome.inputs;
  const std::span<const std::uint8_t> bytes(data, size);
  for (const bool past : {false, true}) {
    try {
      fscore::dmlog::ReadOptions options;
      options.past_count = past;
      const fscore::dmlog::LogReader log(bytes, options);
      if (!past) ++g_outcome.read;
      check(log, bytes);
    } catch (const fscore::dmlog::LogError&) {
      if (!past) ++g_outcome.refused;
      break;
    }
  }
  return 0;
}
