// SPDX-License-Identifier: BSD-3-Clause
#include "crashlab/index/recording_index.h"

#include <deque>
#include <unordered_map>

namespace crashlab {

namespace {

[[noreturn]] void fail(const Frame& f, const std::string& what) {
  throw RecordingError(f.at, "recording: byte " + std::to_string(f.at) + " (frame " + std::to_string(f.sequence) +
                                 "): " + what);
}

}  // namespace

RecordingIndex::RecordingIndex(std::span<const std::uint8_t> bytes) {
  FrameReader reader(bytes);
  exports_ = reader.exports();
  std::unordered_map<std::uint64_t, std::size_t> change_of;  // id -> index in changes_
  std::unordered_map<std::uint64_t, std::size_t> flush_of;   // id -> index in flushes_
  // Per export: the changes acknowledged and not durable yet, in the order
  // of their acks. A flush covers those acknowledged before its frame: when
  // it completes, a prefix of this queue.
  std::vector<std::deque<std::size_t>> unflushed(exports_.size());
  const auto change_named = [&](const Frame& f) -> IndexedChange& {
    const auto it = change_of.find(f.id);
    if (it == change_of.end() || changes_[it->second].device != f.device)
      fail(f, "a " + std::string(to_string(f.kind)) + " of change " + std::to_string(f.id) +
                  ", which no earlier frame of this export made");
    IndexedChange& c = changes_[it->second];
    if (c.acked != kNever || c.failed != kNever) fail(f, "change " + std::to_string(f.id) + " ends twice");
    return c;
  };
  while (auto frame = reader.next()) {
    const Frame& f = *frame;
    switch (f.kind) {
      case FrameKind::base:
        bases_.push_back({f.device, f.offset, f.data});
        break;
      case FrameKind::write:
      case FrameKind::zero:
      case FrameKind::trim: {
        if (!change_of.emplace(f.id, changes_.size()).second)
          fail(f, "a second change with id " + std::to_string(f.id));
        IndexedChange c;
        c.id = f.id;
        c.sequence = f.sequence;
        c.kind = f.kind;
        c.device = f.device;
        c.fua = f.fua();
        c.offset = f.offset;
        c.length = f.length;
        c.data = f.data;
        changes_.push_back(c);
        break;
      }
      case FrameKind::ack: {
        IndexedChange& c = change_named(f);
        c.acked = f.sequence;
        c.durable_on_ack = f.durable();
        if (c.durable_on_ack) {
          c.durable = f.sequence;
          durable_order_.push_back(change_of[f.id]);
        } else {
          unflushed[c.device].push_back(change_of[f.id]);
        }
        break;
      }
      case FrameKind::failed:
        change_named(f).failed = f.sequence;
        break;
      case FrameKind::flush:
        if (!flush_of.emplace(f.id, flushes_.size()).second) fail(f, "a second flush with id " + std::to_string(f.id));
        flushes_.push_back({f.id, f.device, f.sequence, kNever});
        break;
      case FrameKind::flush_done: {
        const auto it = flush_of.find(f.id);
        if (it == flush_of.end() || flushes_[it->second].device != f.device || flushes_[it->second].done != kNever)
          fail(f, "a flush_done of flush " + std::to_string(f.id) + ", which is not a pending flush of this export");
        IndexedFlush& flush = flushes_[it->second];
        flush.done = f.sequence;
        auto& waiting = unflushed[f.device];
        for (; !waiting.empty() && changes_[waiting.front()].acked < flush.sequence; waiting.pop_front()) {
          changes_[waiting.front()].durable = f.sequence;
          durable_order_.push_back(waiting.front());
        }
        break;
      }
      case FrameKind::mark:
        marks_.push_back({f.sequence, f.time_ns, std::string(f.text)});
        break;
      case FrameKind::end:
        end_ = f.sequence;
        break;
      default:
        break;
    }
  }
  stopped_ = reader.stopped();
  stop_reason_ = reader.stop_reason();
}

}  // namespace crashlab
