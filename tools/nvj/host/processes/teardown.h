// SPDX-License-Identifier: BSD-3-Clause
// Teardown: undo steps registered as a run builds up, run in reverse when it
// ends, whether it succeeded, failed or was interrupted. A step that fails is
// reported and the rest still run.
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace nvj::cli {

class Teardown {
 public:
  Teardown() = default;
  ~Teardown() { run(); }
  Teardown(const Teardown&) = delete;
  Teardown& operator=(const Teardown&) = delete;

  void add(std::string what, std::function<void()> step) { steps_.emplace_back(std::move(what), std::move(step)); }

  // Runs every step, newest first; returns false if any failed.
  bool run();

 private:
  std::vector<std::pair<std::string, std::function<void()>>> steps_;
};

}  // namespace nvj::cli
