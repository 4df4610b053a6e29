// SPDX-License-Identifier: BSD-3-Clause
#include "crashlab/record/log_import.h"

#include <algorithm>
#include <map>
#include <stdexcept>

#include "crashlab/states/crash_points.h"
#include "fscore/record/frame_encoder.h"

namespace crashlab {

namespace {

using fscore::dmlog::Entry;
using fscore::record::FrameBuffer;
using fscore::record::FrameEncoder;
namespace dmlog = fscore::dmlog;
namespace record = fscore::record;

constexpr std::size_t kFlushAt = 8u << 20;          // hand the frames out in pieces of about this much
constexpr std::string_view kEndMark = "dm-log-writes-end";  // the kernel's last entry
constexpr std::uint64_t kTrimChunk = 1ull << 30;     // a trim frame's length is 32 bits

class Importer {
 public:
  Importer(const std::vector<LogSource>& logs, const std::function<void(std::span<const std::uint8_t>)>& out)
      : logs_(logs), out_(out), stats_{std::vector<LogImportStats::PerLog>(logs.size())} {}

  LogImportStats run(const std::optional<std::string>& start_mark) {
    std::vector<std::size_t> first(logs_.size(), 0);  // each log's first change entry
    if (start_mark)
      for (std::size_t d = 0; d < logs_.size(); ++d) first[d] = after_mark(d, *start_mark);
    std::vector<record::ExportInfo> exports;
    for (const LogSource& s : logs_) exports.push_back({s.name, s.size, s.log->super().sectorsize});
    encoder_.header(buffer_, exports);
    for (std::size_t d = 0; d < logs_.size(); ++d) base(d, first[d]);
    if (logs_.size() == 1) {
      const auto& entries = logs_[0].log->entries();
      for (std::size_t i = first[0]; i < entries.size(); ++i) entry(0, entries[i]);
    } else {
      interleave(first);
    }
    encoder_.end(buffer_);
    stats_.frames = encoder_.frames();
    hand_out(true);
    return stats_;
  }

 private:
  std::size_t after_mark(std::size_t d, const std::string& label) {
    const auto& entries = logs_[d].log->entries();
    for (std::size_t i = 0; i < entries.size(); ++i)
      if (entries[i].is(dmlog::kMark) && entries[i].label == label) return i + 1;
    throw std::invalid_argument("the " + logs_[d].name + " log has no mark '" + label + "' to start from");
  }

  // The entries before `end`, applied in order, as base frames: the
  // contents at the start, one log sector at a time.
  void base(std::size_t d, std::size_t end) {
    const std::uint64_t sector = logs_[d].log->super().sectorsize;
    std::map<std::uint64_t, const std::uint8_t*> held;  // by sector: its bytes, absent = zeroes
    const auto& entries = logs_[d].log->entries();
    for (std::size_t i = 0; i < end; ++i) {
      const Entry& e = entries[i];
      if (e.is(dmlog::kMark)) continue;
      if (e.is(dmlog::kDiscard)) {  // a range of any size: erased as one
        held.erase(held.lower_bound(e.header.sector), held.lower_bound(e.header.sector + e.header.nr_sectors));
        continue;
      }
      for (std::uint64_t s = 0; s < e.header.nr_sectors; ++s) held[e.header.sector + s] = e.data.data() + s * sector;
    }
    stats_.logs[d].base_entries = end;
    if (logs_[d].base != nullptr) image(d, held);
    std::vector<std::uint8_t> run;
    std::uint64_t run_start = 0;
    auto emit = [&] {
      if (!run.empty()) encoder_.base(buffer_, static_cast<std::uint8_t>(d), run_start * sector, run.data(), run.size());
      run.clear();
      hand_out(false);
    };
    for (const auto& [s, bytes] : held) {
      if (!run.empty() && (s != run_start + run.size() / sector || run.size() >= record::kBaseChunk)) emit();
      if (run.empty()) run_start = s;
      run.insert(run.end(), bytes, bytes + sector);
    }
    emit();
  }

  // The image the log started from, in chunks, but for its zeroes and the
  // sectors the entries before the start write (`held`, emitted after).
  void image(std::size_t d, const std::map<std::uint64_t, const std::uint8_t*>& held) {
    const fscore::BlockSource& from = *logs_[d].base;
    const std::uint64_t sector = logs_[d].log->super().sectorsize;
    const std::uint64_t size = std::min(from.size(), logs_[d].size) / sector * sector;
    std::vector<std::uint8_t> chunk;
    for (std::uint64_t at = 0; at < size; at += record::kBaseChunk) {
      chunk.resize(std::min<std::uint64_t>(record::kBaseChunk, size - at));
      from.read(at, chunk);
      std::uint64_t run = 0;  // the run's first byte in the chunk
      for (std::uint64_t s = 0; s <= chunk.size(); s += sector) {
        const bool keep = s < chunk.size() && !held.contains((at + s) / sector) &&
                          std::any_of(chunk.begin() + static_cast<std::ptrdiff_t>(s),
                                      chunk.begin() + static_cast<std::ptrdiff_t>(s + sector),
                                      [](std::uint8_t b) { return b != 0; });
        if (keep) continue;
        if (s > run) encoder_.base(buffer_, static_cast<std::uint8_t>(d), at + run, chunk.data() + run, s - run);
        run = s + sector;
      }
      hand_out(false);
    }
  }

  void entry(std::size_t d, const Entry& e) {
    auto& st = stats_.logs[d];
    const auto device = static_cast<std::uint8_t>(d);
    const std::uint64_t sector = logs_[d].log->super().sectorsize;
    if (e.is(dmlog::kMark)) {
      if (e.label == kEndMark && &e == &logs_[d].log->entries().back()) return;  // the end, already a crash point
      encoder_.mark(buffer_, 0, e.label);
      ++st.marks;
      return;
    }
    if (e.is(dmlog::kFlush)) {
      const std::uint64_t id = next_id_++;
      encoder_.flush(buffer_, device, id);
      encoder_.flush_done(buffer_, device, id);
      ++st.flushes;
    }
    if (e.is(dmlog::kDiscard)) {
      ++st.discards;
      for (std::uint64_t at = 0, length = e.header.nr_sectors * sector; at < length; at += kTrimChunk) {
        const std::uint64_t id = next_id_++;
        encoder_.trim(buffer_, device, id, e.header.sector * sector + at,
                      static_cast<std::uint32_t>(std::min(kTrimChunk, length - at)), false);
        encoder_.ack(buffer_, device, id, false);
      }
    } else if (!e.data.empty()) {
      const bool fua = e.is(dmlog::kFua);
      ++st.writes;
      st.fua += fua;
      for (std::uint64_t at = 0; at < e.data.size(); at += record::kMaxWrite) {
        const auto length = static_cast<std::uint32_t>(std::min<std::uint64_t>(record::kMaxWrite, e.data.size() - at));
        const std::uint64_t id = next_id_++;
        encoder_.write(buffer_, device, id, e.header.sector * sector + at, e.data.data() + at, length, fua);
        encoder_.ack(buffer_, device, id, fua);
      }
    }
    hand_out(false);
  }

  // Two logs, in order only at the marks both share.
  void interleave(const std::vector<std::size_t>& first) {
    const auto& a = logs_[0].log->entries();
    const auto& b = logs_[1].log->entries();
    std::vector<std::pair<std::size_t, std::size_t>> shared;  // the two entries of each shared mark
    std::size_t from = first[1];
    for (std::size_t i = first[0]; i < a.size(); ++i) {
      if (!a[i].is(dmlog::kMark)) continue;
      for (std::size_t j = from; j < b.size(); ++j)
        if (b[j].is(dmlog::kMark) && b[j].label == a[i].label) {
          shared.emplace_back(i, j);
          from = j + 1;
          break;
        }
    }
    stats_.shared_marks = shared.size();
    encoder_.mark(buffer_, 0, kMarksOnlyLabel);
    std::size_t i = first[0], j = first[1];
    auto run = [&](std::size_t d, const std::vector<Entry>& entries, std::size_t& at, std::size_t end) {
      for (; at < end; ++at) {
        if (entries[at].is(dmlog::kMark))
          ++stats_.logs[d].dropped_marks;
        else
          entry(d, entries[at]);
      }
    };
    for (const auto& [ma, mb] : shared) {
      run(0, a, i, ma);
      run(1, b, j, mb);
      entry(0, a[ma]);  // the mark, once
      ++i;
      ++j;
    }
    run(0, a, i, a.size());
    run(1, b, j, b.size());
  }

  void hand_out(bool all) {
    if (buffer_.size() >= kFlushAt || (all && !buffer_.empty())) {
      out_(buffer_.bytes());
      buffer_.clear();
    }
  }

  const std::vector<LogSource>& logs_;
  const std::function<void(std::span<const std::uint8_t>)>& out_;
  LogImportStats stats_;
  FrameBuffer buffer_;
  FrameEncoder encoder_;
  std::uint64_t next_id_ = 1;
};

}  // namespace

LogImportStats import_logs(const std::vector<LogSource>& logs, const std::optional<std::string>& start_mark,
                           const std::function<void(std::span<const std::uint8_t>)>& out) {
  if (logs.empty() || logs.size() > 2) throw std::invalid_argument("one log or two (data and journal) are imported");
  for (const LogSource& s : logs) {
    if (s.log == nullptr) throw std::invalid_argument("the " + s.name + " log is missing");
    if (s.size < s.log->extent())
      throw std::invalid_argument("the " + s.name + " export's size, " + std::to_string(s.size) +
                                  " bytes, does not hold what its log writes (up to byte " +
                                  std::to_string(s.log->extent()) + ")");
    if (s.size % s.log->super().sectorsize != 0)
      throw std::invalid_argument("the " + s.name + " export's size, " + std::to_string(s.size) +
                                  " bytes, is not whole sectors of " + std::to_string(s.log->super().sectorsize));
  }
  return Importer(logs, out).run(start_mark);
}

}  // namespace crashlab
