// SPDX-License-Identifier: BSD-3-Clause
// Store: where an export's bytes live. A store knows nothing of timing or of
// the NBD protocol; it moves bytes and says which ranges are allocated.
//
// Thread safety: every method may be called concurrently from nbdkit worker
// threads. Overlapping concurrent writes land in some order, as on a disk.
//
// Errors are thrown as IoError (server/store/io_error.h), carrying the errno
// the client gets.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

namespace nvj {

// One run of the address space as extents() reports it.
struct Extent {
  std::uint64_t offset = 0;
  std::uint64_t length = 0;
  bool hole = false;  // not allocated; reads return zeroes
};

using ExtentSink = std::function<void(const Extent&)>;

class Store {
 public:
  virtual ~Store() = default;
  Store() = default;
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  virtual std::uint64_t size() const = 0;

  virtual void read(void* buf, std::uint32_t count, std::uint64_t offset) = 0;

  // durable: the bytes are on stable storage when the call returns (FUA, or a
  // device whose writes are durable on acknowledgement).
  virtual void write(const void* buf, std::uint32_t count, std::uint64_t offset, bool durable) = 0;

  // Zeroes the range; whole pages or blocks may be deallocated.
  virtual void zero(std::uint32_t count, std::uint64_t offset, bool durable) = 0;

  // Deallocates the range where the store can; reads of it return zeroes
  // afterwards in every store, so trim is deterministic.
  virtual void trim(std::uint32_t count, std::uint64_t offset, bool durable) = 0;

  // Every write completed before the call is durable when it returns.
  virtual void flush() = 0;

  // Reports allocation from offset for at least one extent and at most
  // `count` bytes, in ascending order, adjacent runs of one kind merged.
  virtual void extents(std::uint64_t offset, std::uint64_t count, const ExtentSink& sink) = 0;

  // Survives the process being killed (a file), or not (memory).
  virtual bool persistent() const = 0;

  // "sparse memory", "file /path".
  virtual std::string describe() const = 0;
};

}  // namespace nvj
