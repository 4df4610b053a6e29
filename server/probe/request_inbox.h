// SPDX-License-Identifier: BSD-3-Clause
// RequestInbox: where serving threads leave their requests for the journal
// tracer while another thread is feeding its decoder, so that no serving
// thread ever sleeps waiting for another one's decoding. The lock is a spin
// lock held for one append or one swap. Bounded: push refuses past
// kCapacity entries and the caller then waits its turn instead.
#pragma once

#include <atomic>
#include <cstddef>
#include <vector>

#include "server/probe/request_observer.h"

namespace nvj {

class RequestInbox {
 public:
  static constexpr std::size_t kCapacity = std::size_t{1} << 14;

  struct Entry {
    ObservedRequest request;  // request.data is null: the bytes are read back from the store
    bool journal_device = false;
  };

  // False when the inbox is full (nothing was added).
  bool push(const ObservedRequest& request, bool journal_device);
  // Moves every waiting entry into `out` (emptied first), oldest first.
  void take(std::vector<Entry>& out);
  bool empty() const { return waiting_.load() == 0; }

 private:
  void lock();
  void unlock() { busy_.store(false, std::memory_order_release); }

  std::atomic<bool> busy_{false};
  std::atomic<std::size_t> waiting_{0};
  std::vector<Entry> entries_;
};

}  // namespace nvj
