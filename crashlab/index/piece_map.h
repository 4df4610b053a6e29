// SPDX-License-Identifier: BSD-3-Clause
// PieceMap: an export's contents as pieces, without copying them: for each
// byte range, which change holds it (its bytes where they lie in the
// recording, or zeroes) and the sequence number of that change's frame. A
// change put over others wins only where it is later in the recording, so
// changes can be put in any order (as they become durable, which is not the
// order they were sent) and the contents are still those of sending them in
// the recording's order. Ranges no piece covers are left to the layer below
// (read() does not touch them). The bytes a piece points at must outlive the
// map. Pure.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <span>
#include <vector>

namespace crashlab {

class PieceMap {
 public:
  struct Piece {
    std::uint64_t end = 0;       // one past its last byte
    std::uint64_t sequence = 0;  // of the change that wrote it
    const std::uint8_t* data = nullptr;  // its first byte; nullptr: zeroes
  };

  // [offset, offset + length) holds `data` (nullptr: zeroes) wherever no
  // piece with a later sequence holds it already.
  void put(std::uint64_t offset, std::uint64_t length, std::uint64_t sequence, const std::uint8_t* data);

  // Copies what the pieces hold into the part of `out` (at `offset`) they
  // cover; the rest of `out` is left as it was.
  void read(std::uint64_t offset, std::span<std::uint8_t> out) const;

  // Calls `visit(start, end, sequence)` for each part of [offset, offset +
  // length) in order: a piece's part, or a gap with sequence 0.
  void each(std::uint64_t offset, std::uint64_t length,
            const std::function<void(std::uint64_t, std::uint64_t, std::uint64_t)>& visit) const;

  // Appends words naming the pieces' parts in [offset, offset + length):
  // how many, then for each where it lies in the range, how long, and where
  // its bytes are (the pointer; 0 for zeroes), and with `with_sequence` the
  // sequence of the change that wrote it too. The bytes behind a pointer
  // never change while the map's owner lives, so equal words, equal bytes
  // over the parts (the rest is left to the layer below); where pointers
  // are freed and reused (a state's own writes), sequences that are never
  // reused tell them apart.
  void identity(std::uint64_t offset, std::uint64_t length, std::vector<std::uint64_t>& key,
                bool with_sequence = false) const;

  // The pieces, by start.
  const std::map<std::uint64_t, Piece>& pieces() const { return pieces_; }
  void clear() { pieces_.clear(); }

 private:
  // Splits the piece that straddles `at`, so that a piece starts there.
  void split(std::uint64_t at);

  std::map<std::uint64_t, Piece> pieces_;  // by start; never overlapping
};

}  // namespace crashlab
