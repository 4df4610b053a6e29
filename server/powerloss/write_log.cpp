// SPDX-License-Identifier: BSD-3-Clause
#include "server/powerloss/write_log.h"

#include <algorithm>
#include <random>
#include <stdexcept>

namespace nvj {

CrashPolicy::Kind CrashPolicy::parse_kind(const std::string& text) {
  if (text == "all") return Kind::all;
  if (text == "random") return Kind::random;
  if (text == "reorder") return Kind::reorder;
  throw std::invalid_argument("policy=" + text + ": expected all, random or reorder");
}

const char* to_string(CrashPolicy::Kind kind) {
  switch (kind) {
    case CrashPolicy::Kind::all: return "all";
    case CrashPolicy::Kind::random: return "random";
    case CrashPolicy::Kind::reorder: return "reorder";
  }
  return "?";
}

WriteLog::Id WriteLog::begin(Store& store, std::uint64_t offset, std::uint32_t count, const void* data) {
  Entry e{0, offset, std::vector<char>(count), {}, State::in_flight, 0};
  store.read(e.before.data(), count, offset);
  e.after = data == nullptr ? std::vector<char>(count, 0)
                            : std::vector<char>(static_cast<const char*>(data), static_cast<const char*>(data) + count);
  std::lock_guard lock(mutex_);
  e.id = next_id_++;
  bytes_ += 2ull * count;
  entries_.push_back(std::move(e));
  return entries_.back().id;
}

void WriteLog::acknowledge(Id id, bool durable) {
  std::lock_guard lock(mutex_);
  for (auto it = entries_.rbegin(); it != entries_.rend(); ++it) {
    if (it->id != id) continue;
    it->state = durable ? State::durable : State::volatile_;
    it->acked = ++ack_seq_;
    break;
  }
  prune();
}

std::uint64_t WriteLog::flush_begin() const {
  std::lock_guard lock(mutex_);
  return ack_seq_;
}

void WriteLog::flush_end(std::uint64_t covered) {
  std::lock_guard lock(mutex_);
  for (auto& e : entries_)
    if (e.state == State::volatile_ && e.acked <= covered) e.state = State::durable;
  prune();
}

void WriteLog::prune() {
  for (;;) {
    while (!entries_.empty() && entries_.front().state == State::durable) {
      bytes_ -= 2ull * entries_.front().before.size();
      entries_.pop_front();
    }
    if (bytes_ <= limit_) return;
    // Over the limit: the oldest volatile write counts as destaged.
    const auto oldest = std::find_if(entries_.begin(), entries_.end(),
                                     [](const Entry& e) { return e.state == State::volatile_; });
    if (oldest == entries_.end()) return;  // only writes in flight are left
    oldest->state = State::durable;
  }
}

void WriteLog::clear() {
  std::lock_guard lock(mutex_);
  entries_.clear();
  bytes_ = 0;
}

CrashReport WriteLog::cut(Store& store, const CrashPolicy& policy) {
  std::lock_guard lock(mutex_);
  CrashReport report;
  report.atomic_unit = policy.atomic_unit.value_or(512);
  // Back to the state before the first write in the log.
  for (auto it = entries_.rbegin(); it != entries_.rend(); ++it)
    store.write(it->before.data(), static_cast<std::uint32_t>(it->before.size()), it->offset, false);

  std::mt19937_64 rng(policy.seed);
  auto coin = [&] { return (rng() & 1u) != 0; };
  // Which volatile writes survive, and in what order they land.
  std::vector<std::size_t> kept_volatile;
  std::vector<bool> keep(entries_.size(), false);
  for (std::size_t i = 0; i < entries_.size(); ++i) {
    const Entry& e = entries_[i];
    if (e.state == State::durable) {
      keep[i] = true;
      ++report.durable;
    } else if (e.state == State::volatile_) {
      keep[i] = policy.kind != CrashPolicy::Kind::all && coin();
      if (keep[i]) {
        kept_volatile.push_back(i);
        ++report.volatile_kept;
      } else {
        ++report.volatile_lost;
        report.bytes_lost += e.after.size();
      }
    }
  }
  std::vector<std::size_t> order(entries_.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  if (policy.kind == CrashPolicy::Kind::reorder) {
    // The kept volatile writes trade places among the kept volatile slots.
    std::vector<std::size_t> shuffled = kept_volatile;
    std::shuffle(shuffled.begin(), shuffled.end(), rng);
    for (std::size_t k = 0; k < kept_volatile.size(); ++k) order[kept_volatile[k]] = shuffled[k];
  }
  for (std::size_t slot = 0; slot < order.size(); ++slot) {
    const Entry& e = entries_[order[slot]];
    const auto size = static_cast<std::uint32_t>(e.after.size());
    if (e.state != State::in_flight) {
      if (keep[order[slot]]) store.write(e.after.data(), size, e.offset, false);
      continue;
    }
    // In flight: torn at the atomic unit.
    ++report.in_flight;
    const std::uint64_t atomic = report.atomic_unit;
    const std::uint32_t unit = atomic == 0 ? size : static_cast<std::uint32_t>(std::min<std::uint64_t>(atomic, size));
    for (std::uint32_t at = 0; at < size; at += unit) {
      const std::uint32_t len = std::min(unit, size - at);
      if (coin())
        store.write(e.after.data() + at, len, e.offset + at, false);
      else
        report.bytes_lost += len;
    }
  }
  store.flush();
  entries_.clear();
  bytes_ = 0;
  return report;
}

std::size_t WriteLog::entries() const {
  std::lock_guard lock(mutex_);
  return entries_.size();
}

std::uint64_t WriteLog::bytes() const {
  std::lock_guard lock(mutex_);
  return bytes_;
}

}  // namespace nvj
