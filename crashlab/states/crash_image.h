// SPDX-License-Identifier: BSD-3-Clause
// CrashImage: the exports as a crash state leaves them, read and written in
// place without copying an image: the recording's starting contents and the
// changes durable at the crash point (kept up to date as the points go by),
// the state's kept volatile changes on top, and on top of those what the
// state's own check writes (the journal replayed into it), each layer a
// PieceMap pointing into the recording. Changes land as sending them in the
// recording's order would: a later one wins where they overlap, whichever
// became durable first. Pure; the recording's bytes must outlive it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "fscore/block_io.h"
#include "crashlab/index/piece_map.h"
#include "crashlab/index/recording_index.h"
#include "crashlab/states/torn_write.h"

namespace crashlab {

class CrashImage {
 public:
  explicit CrashImage(const RecordingIndex& index);
  CrashImage(const CrashImage&) = delete;
  CrashImage& operator=(const CrashImage&) = delete;

  // The changes durable right after frame `sequence` join the durable
  // contents. Sequences only grow.
  void advance(std::uint64_t sequence);
  // The state: the durable contents with `kept` (indices in changes(), in
  // the recording's order) on top, and the first bytes of `torn` (sent
  // after them) on top of those. Forgets what the last state wrote.
  void set_state(const std::vector<std::size_t>& kept, const std::optional<TornWrite>& torn = std::nullopt);

  // One export of the current state.
  class Export final : public fscore::BlockSource, public fscore::BlockSink {
   public:
    std::uint64_t size() const override { return size_; }
    void read(std::uint64_t offset, std::span<std::uint8_t> bytes) const override;
    // The three layers' pieces in the range, each named by where its bytes
    // lie: in the recording, or (the state's own writes) in a copy numbered
    // by a sequence no other write of this image ever gets. Valid while the
    // image lives.
    bool identity(std::uint64_t offset, std::uint64_t length, std::vector<std::uint64_t>& key) const override;
    // The same words for the state as set_state() made it, before anything
    // wrote into it (the durable contents and the kept changes only).
    void state_identity(std::uint64_t offset, std::uint64_t length, std::vector<std::uint64_t>& key) const;
    // Kept with the state until the next set_state.
    void write(std::uint64_t offset, std::span<const std::uint8_t> bytes) override;
    // The byte ranges [start, end) something (the starting contents, a
    // change, the state's own writes) holds, in order, joined where they
    // touch: what reads as anything but zeroes is in them.
    std::vector<std::pair<std::uint64_t, std::uint64_t>> covered() const;
    // covered() less the ranges whose topmost piece is zeroes (a write of
    // zeroes, a trim): outside these the state reads as zeroes. A change
    // of zero bytes sent as an ordinary write stays in them.
    std::vector<std::pair<std::uint64_t, std::uint64_t>> nonzero() const;

   private:
    friend class CrashImage;
    Export(CrashImage& image, std::uint64_t size) : image_(image), size_(size) {}
    CrashImage& image_;
    std::uint64_t size_;
    PieceMap durable_, kept_, written_;
  };
  Export& exported(std::uint8_t device) { return *exports_.at(device); }
  // The export named `name`, if the recording has one.
  std::optional<std::uint8_t> find(std::string_view name) const;
  std::size_t count() const { return exports_.size(); }

 private:
  const RecordingIndex& index_;
  // Puts the first `length` bytes of change `i` over the durable contents
  // where it was sent later.
  void keep(std::size_t i, std::uint64_t length);

  std::vector<std::unique_ptr<Export>> exports_;
  std::size_t next_durable_ = 0;  // in durable_order()
  std::vector<std::unique_ptr<std::uint8_t[]>> written_bytes_;  // the current state's writes
  std::uint64_t next_write_;  // the sequence of the next write: only grows
};

}  // namespace crashlab
