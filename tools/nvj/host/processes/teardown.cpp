// SPDX-License-Identifier: BSD-3-Clause
#include "tools/nvj/host/processes/teardown.h"

#include <cstdio>
#include <exception>

namespace nvj::cli {

bool Teardown::run() {
  bool ok = true;
  while (!steps_.empty()) {
    auto [what, step] = std::move(steps_.back());
    steps_.pop_back();
    try {
      step();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "nvj: teardown: %s: %s\n", what.c_str(), e.what());
      ok = false;
    }
  }
  return ok;
}

}  // namespace nvj::cli
