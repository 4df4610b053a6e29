// SPDX-License-Identifier: BSD-3-Clause
#include "server/probe/request_inbox.h"

#include <thread>

namespace nvj {

void RequestInbox::lock() {
  for (unsigned spins = 0; busy_.exchange(true, std::memory_order_acquire); ++spins) {
    // Held for an append or a swap: a few spins, unless its holder lost the CPU.
    if (spins < 64) {
#if defined(__x86_64__) || defined(__i386__)
      __builtin_ia32_pause();
#endif
    } else {
      std::this_thread::yield();
    }
  }
}

bool RequestInbox::push(const ObservedRequest& request, bool journal_device) {
  lock();
  const bool room = entries_.size() < kCapacity;
  if (room) {
    entries_.push_back(Entry{request, journal_device});
    entries_.back().request.data = nullptr;
    waiting_.fetch_add(1);  // sequentially consistent: the feeder looks at it after letting go
  }
  unlock();
  return room;
}

void RequestInbox::take(std::vector<Entry>& out) {
  out.clear();
  lock();
  out.swap(entries_);
  waiting_.store(0);
  unlock();
}

}  // namespace nvj
