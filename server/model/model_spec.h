// SPDX-License-Identifier: BSD-3-Clause
// ModelSpec: a timing model as users write it in data-model= / journal-model=:
//   NAME[:KEY=VALUE[,KEY=VALUE]...]      e.g. hdd:rpm=5400,cache=off
// and the reader each model uses to take its parameters, so every model
// rejects unknown keys and bad values the same way.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>

#include "common/duration.h"

namespace nvj {

struct ModelSpec {
  std::string name;
  std::map<std::string, std::string, std::less<>> params;
  std::string text;  // as written

  // Throws std::invalid_argument: empty name, "key" without "=", a key twice.
  static ModelSpec parse(std::string_view text);
};

// Takes a spec's parameters by key; finish() rejects any key not taken.
// Errors are std::invalid_argument naming the model and the key.
class ModelParams {
 public:
  explicit ModelParams(const ModelSpec& spec) : spec_(spec) {}

  Nanos duration(std::string_view key, Nanos fallback);
  std::uint64_t size(std::string_view key, std::uint64_t fallback);  // bytes, or bytes per second
  std::uint64_t count(std::string_view key, std::uint64_t fallback, std::uint64_t min, std::uint64_t max);
  bool on_off(std::string_view key, bool fallback);
  // The device's atomic unit (atomic=SIZE): whole 512-byte sectors, at most
  // 1 MiB. What a power cut keeps of a write in flight, a unit at a time.
  std::uint64_t atomic_unit(std::uint64_t fallback);
  // Any of `keys` (aliases, e.g. "latency" for both read and write).
  bool has(std::string_view key) const { return spec_.params.contains(key); }

  // Throws if the spec holds a key no call asked for, listing the known keys.
  void finish() const;

 private:
  const std::string* take(std::string_view key);
  [[noreturn]] void bad(std::string_view key, const std::string& why) const;

  const ModelSpec& spec_;
  std::set<std::string, std::less<>> known_;
};

}  // namespace nvj
