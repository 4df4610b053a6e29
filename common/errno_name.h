// SPDX-License-Identifier: BSD-3-Clause
// Names and messages for errno values, as reports and error lines show them.
#pragma once

#include <stdexcept>
#include <string>

namespace nvj {

// "ENOSPC" for ENOSPC; "errno 1234" for a value the C library has no name for.
std::string errno_name(int error);

// The C library's message: "No space left on device".
std::string errno_message(int error);

// The error of a failed call: "WHAT: " and errno's message as it is now
// (make it before anything else can change errno).
std::runtime_error errno_error(const std::string& what);

}  // namespace nvj
