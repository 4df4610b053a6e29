// SPDX-License-Identifier: BSD-3-Clause
// FrameBuffer: the bytes frames are appended to (frame_encoder.h). Its
// storage starts on a kAlignment boundary, so a recorder can hand a batch of
// whole blocks to the kernel with O_DIRECT as it is, and it grows without
// zeroing what it adds (every byte appended is written by the encoder).
// Storage moves only when the size passes the capacity: a caller that has
// reserved enough may keep pointers into it while it appends more (the
// recorder fills a write frame's bytes after it has appended the frame).
// Pure: no I/O.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace fscore::record {

class FrameBuffer {
 public:
  static constexpr std::size_t kAlignment = 4096;

  FrameBuffer() = default;
  ~FrameBuffer();
  FrameBuffer(FrameBuffer&& other) noexcept { swap(other); }
  FrameBuffer& operator=(FrameBuffer&& other) noexcept {
    swap(other);
    return *this;
  }
  FrameBuffer(const FrameBuffer&) = delete;
  FrameBuffer& operator=(const FrameBuffer&) = delete;

  // `n` more bytes at the end, not initialised: where they start.
  std::uint8_t* extend(std::size_t n);
  // Room for `capacity` bytes without moving (rounded up to kAlignment).
  void reserve(std::size_t capacity);
  void clear() { size_ = 0; }
  void swap(FrameBuffer& other) noexcept;

  std::uint8_t* data() { return bytes_; }
  const std::uint8_t* data() const { return bytes_; }
  std::size_t size() const { return size_; }
  std::size_t capacity() const { return capacity_; }
  bool empty() const { return size_ == 0; }
  std::span<const std::uint8_t> bytes() const { return {bytes_, size_}; }

 private:
  std::uint8_t* bytes_ = nullptr;
  std::size_t size_ = 0;
  std::size_t capacity_ = 0;
};

}  // namespace fscore::record
