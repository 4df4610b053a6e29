// SPDX-License-Identifier: BSD-3-Clause
#include "crashlab/record/log_export.h"

#include <algorithm>
#include <map>
#include <set>
#include <stdexcept>
#include <vector>

#include "fscore/dmlog/log_writer.h"

namespace crashlab {

namespace {

namespace dmlog = fscore::dmlog;

constexpr std::uint64_t kBaseEntry = 1u << 20;  // the base is logged in writes of at most this much

// What happens at a frame of the recording, for this export.
struct Event {
  enum Kind { change_acked, flush_issued, flush_done, mark } kind;
  std::size_t index;  // in changes(), flushes() or marks()
};

class Exporter {
 public:
  Exporter(const RecordingIndex& index, std::uint8_t device, fscore::BlockSink& out, const LogExportOptions& options)
      : index_(index), device_(device), writer_(out, options.sectorsize), options_(options),
        zeroes_(kBaseEntry, 0) {}

  LogExportStats run() {
    if (device_ >= index_.exports().size())
      throw std::invalid_argument("the recording has no export " + std::to_string(device_));
    for (const IndexedBase& b : index_.bases())
      if (b.device == device_) base(b);
    writer_.flush();
    writer_.mark(options_.base_mark);
    stats_.flushes = 1;
    stats_.marks = 1;
    std::map<std::uint64_t, Event> events;  // by frame sequence
    for (std::size_t i = 0; i < index_.changes().size(); ++i) {
      const IndexedChange& c = index_.changes()[i];
      if (c.device != device_) continue;
      if (c.acked == kNever)
        ++stats_.not_acknowledged;
      else
        events.emplace(c.acked, Event{Event::change_acked, i});
    }
    for (std::size_t i = 0; i < index_.flushes().size(); ++i) {
      const IndexedFlush& f = index_.flushes()[i];
      if (f.device != device_) continue;
      events.emplace(f.sequence, Event{Event::flush_issued, i});
      if (f.done != kNever) events.emplace(f.done, Event{Event::flush_done, i});
    }
    for (std::size_t i = 0; i < index_.marks().size(); ++i)
      events.emplace(index_.marks()[i].sequence, Event{Event::mark, i});
    for (const auto& [sequence, e] : events) step(e);
    for (const auto& [flush, held] : waiting_)
      for (std::size_t c : held) change(index_.changes()[c]);  // flushes that never completed
    writer_.mark("dm-log-writes-end");
    ++stats_.marks;
    writer_.finish();
    stats_.entries = writer_.entries();
    stats_.bytes = writer_.bytes();
    return stats_;
  }

 private:
  void step(const Event& e) {
    switch (e.kind) {
      case Event::change_acked: {
        const IndexedChange& c = index_.changes()[e.index];
        if (in_flight_.empty() || c.fua)
          change(c);
        else
          waiting_[*in_flight_.rbegin()].push_back(e.index);
        break;
      }
      case Event::flush_issued:
        in_flight_.insert(e.index);
        waiting_[e.index];
        break;
      case Event::flush_done: {
        in_flight_.erase(e.index);
        writer_.flush();
        ++stats_.flushes;
        const std::vector<std::size_t> held = std::move(waiting_[e.index]);
        waiting_.erase(e.index);
        for (std::size_t c : held) {
          if (in_flight_.empty())
            change(index_.changes()[c]);
          else
            waiting_[*in_flight_.rbegin()].push_back(c);
        }
        break;
      }
      case Event::mark: {
        const IndexedMark& m = index_.marks()[e.index];
        try {
          writer_.mark(m.label);
        } catch (const std::invalid_argument& error) {
          throw std::invalid_argument("mark " + std::to_string(e.index) + " ('" + m.label.substr(0, 40) +
                                      (m.label.size() > 40 ? "...'" : "'") + "): " + error.what() +
                                      " (a larger --sector-size holds it)");
        }
        ++stats_.marks;
        break;
      }
    }
  }

  std::uint64_t sector_of(std::uint64_t offset, std::uint64_t length, const std::string& what) const {
    const std::uint64_t s = options_.sectorsize;
    if (offset % s != 0 || length % s != 0)
      throw std::invalid_argument(what + " at byte " + std::to_string(offset) + ", " + std::to_string(length) +
                                  " bytes: not on the log's sectors of " + std::to_string(s) + " bytes");
    return offset / s;
  }

  void base(const IndexedBase& b) {
    const std::uint64_t first = sector_of(b.offset, b.data.size(), "the base");
    for (std::uint64_t at = 0; at < b.data.size(); at += kBaseEntry) {
      const std::uint64_t n = std::min<std::uint64_t>(kBaseEntry, b.data.size() - at);
      writer_.write(first + at / options_.sectorsize, b.data.subspan(at, n));
      ++stats_.writes;
    }
  }

  void change(const IndexedChange& c) {
    const std::string what = "change " + std::to_string(c.id);
    const std::uint64_t first = sector_of(c.offset, c.length, what);
    if (c.kind == FrameKind::trim) {
      writer_.discard(first, c.length / options_.sectorsize);
      ++stats_.discards;
      return;
    }
    const std::uint64_t flags = c.fua ? dmlog::kFua : 0;
    if (c.kind == FrameKind::write) {
      writer_.write(first, c.data, flags);
    } else {  // zero: written as zeroes, in entries of at most kBaseEntry
      for (std::uint64_t at = 0; at < c.length; at += kBaseEntry) {
        const std::uint64_t n = std::min<std::uint64_t>(kBaseEntry, c.length - at);
        writer_.write(first + at / options_.sectorsize, std::span(zeroes_).first(n), flags);
      }
    }
    ++stats_.writes;
  }

  const RecordingIndex& index_;
  std::uint8_t device_;
  dmlog::LogWriter writer_;
  LogExportOptions options_;
  std::vector<std::uint8_t> zeroes_;  // kBaseEntry of them
  std::set<std::size_t> in_flight_;                           // flushes issued, not done
  std::map<std::size_t, std::vector<std::size_t>> waiting_;   // by flush: changes acked while it was in flight
  LogExportStats stats_;
};

}  // namespace

LogExportStats export_log(const RecordingIndex& index, std::uint8_t device, fscore::BlockSink& out,
                          const LogExportOptions& options) {
  return Exporter(index, device, out, options).run();
}

}  // namespace crashlab
