// SPDX-License-Identifier: BSD-3-Clause
#include "common/errno_name.h"

#include <string.h>

#include <cerrno>

namespace nvj {

std::string errno_name(int error) {
  const char* name = ::strerrorname_np(error);  // glibc 2.32 and later; null when unknown
  return name != nullptr ? name : "errno " + std::to_string(error);
}

std::string errno_message(int error) {
  char buf[128];
  return ::strerror_r(error, buf, sizeof buf);  // GNU strerror_r: returns the message
}

std::runtime_error errno_error(const std::string& what) { return std::runtime_error(what + ": " + errno_message(errno)); }

}  // namespace nvj
