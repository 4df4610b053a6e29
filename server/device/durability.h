// SPDX-License-Identifier: BSD-3-Clause
// When an acknowledged write becomes durable (docs/design.md, "The durability
// contract").
#pragma once

#include <string_view>

namespace nvj {

enum class Durability {
  on_acknowledge,  // NVRAM, cache off: durable when the write is acknowledged; flush is a no-op
  on_flush,        // volatile write cache: durable after a completed flush, or at once with FUA
};

constexpr std::string_view to_string(Durability d) {
  return d == Durability::on_acknowledge ? "durable on acknowledgement" : "durable after flush or FUA";
}

}  // namespace nvj
