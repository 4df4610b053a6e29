// SPDX-License-Identifier: BSD-3-Clause
#include "server/store/io_error.h"

#include <cstring>

namespace nvj {

std::string errno_text(int err) {
  const char* text = strerrordesc_np(err);
  return text != nullptr ? text : "error " + std::to_string(err);
}

}  // namespace nvj
