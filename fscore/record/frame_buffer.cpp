// SPDX-License-Identifier: BSD-3-Clause
#include "fscore/record/frame_buffer.h"

#include <algorithm>
#include <cstring>
#include <new>
#include <utility>

namespace fscore::record {

namespace {

std::uint8_t* allocate(std::size_t n) {
  return static_cast<std::uint8_t*>(::operator new(n, std::align_val_t{FrameBuffer::kAlignment}));
}

void release(std::uint8_t* p) {
  if (p != nullptr) ::operator delete(p, std::align_val_t{FrameBuffer::kAlignment});
}

}  // namespace

FrameBuffer::~FrameBuffer() { release(bytes_); }

void FrameBuffer::swap(FrameBuffer& other) noexcept {
  std::swap(bytes_, other.bytes_);
  std::swap(size_, other.size_);
  std::swap(capacity_, other.capacity_);
}

void FrameBuffer::reserve(std::size_t capacity) {
  if (capacity <= capacity_) return;
  capacity = (capacity + kAlignment - 1) / kAlignment * kAlignment;
  std::uint8_t* bytes = allocate(capacity);
  if (size_ > 0) std::memcpy(bytes, bytes_, size_);
  release(bytes_);
  bytes_ = bytes;
  capacity_ = capacity;
}

std::uint8_t* FrameBuffer::extend(std::size_t n) {
  if (n > capacity_ - size_) reserve(std::max(size_ + n, capacity_ * 2));
  std::uint8_t* at = bytes_ + size_;
  size_ += n;
  return at;
}

}  // namespace fscore::record
