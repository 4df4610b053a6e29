// SPDX-License-Identifier: BSD-3-Clause
// A value for a URL's query, percent-encoded (RFC 3986): every byte but
// letters, digits and -._~ becomes %XX, so a label or a path with spaces,
// '&', '=', '%' or UTF-8 arrives at the control API as it was written.
#pragma once

#include <string>
#include <string_view>

namespace nvj {

std::string query_escape(std::string_view value);

// The value of a hex digit (0-9, a-f, A-F), or -1 for any other character.
int hex_digit(char c);

// The reverse, as a query's key or value is read: %XX is the byte XX, '+'
// a space; std::invalid_argument for a '%' not followed by two hex digits.
std::string query_unescape(std::string_view text);

}  // namespace nvj
