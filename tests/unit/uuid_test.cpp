// SPDX-License-Identifier: BSD-3-Clause
// UUIDs in fscore: the 36-character form parsed and formatted, the nil
// UUID, and version 4 UUIDs made from random bytes.
#include <catch2/catch.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

#include "fscore/uuid.h"

namespace uuid_test {

using fscore::Uuid;

namespace {

Uuid uuid_of(std::uint8_t first) {
  Uuid u{};
  for (std::size_t i = 0; i < u.size(); ++i) u[i] = static_cast<std::uint8_t>(first + 17 * i);
  return u;
}

}  // namespace

TEST_CASE("uuid parses and formats the 36-character form", "[uuid]") {
  const auto u = fscore::parse_uuid("01234567-89ab-cdef-0123-456789abcdef");
  REQUIRE(u.has_value());
  const Uuid expected = {0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef,
                         0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef};
  CHECK(*u == expected);
  CHECK(fscore::format_uuid(*u) == "01234567-89ab-cdef-0123-456789abcdef");
  const auto upper = fscore::parse_uuid("01234567-89AB-CDEF-0123-456789ABCDEF");
  REQUIRE(upper.has_value());
  CHECK(*upper == expected);
  for (std::uint8_t first : {std::uint8_t{0}, std::uint8_t{0x5A}, std::uint8_t{0xF0}}) {
    const Uuid any = uuid_of(first);
    CHECK(fscore::parse_uuid(fscore::format_uuid(any)) == any);
  }
}

TEST_CASE("uuid parsing rejects every other form", "[uuid]") {
  for (const char* text : {"", "01234567-89ab-cdef-0123-456789abcde", "01234567-89ab-cdef-0123-456789abcdef0",
                           "0123456789abcdef0123456789abcdef", "01234567-89ab-cdef-0123_456789abcdef",
                           "0123456-789ab-cdef-0123-456789abcdef", "01234567-89ab-cdeg-0123-456789abcdef",
                           "{1234567-89ab-cdef-0123-456789abcde}", "01234567 89ab cdef 0123 456789abcdef",
                           "01234567-89ab-cdef-0123-456789abcd-f"}) {
    CAPTURE(text);
    CHECK_FALSE(fscore::parse_uuid(text).has_value());
  }
}

TEST_CASE("uuid nil and version 4", "[uuid]") {
  CHECK(fscore::is_nil(Uuid{}));
  CHECK_FALSE(fscore::is_nil(uuid_of(0)));
  std::array<std::uint8_t, 16> random{};
  random.fill(0xFF);
  const Uuid v4 = fscore::make_random_uuid(random);
  CHECK(v4[6] == 0x4F);  // version nibble 4
  CHECK(v4[8] == 0xBF);  // variant 10xx
  random.fill(0);
  const Uuid low = fscore::make_random_uuid(random);
  CHECK(low[6] == 0x40);
  CHECK(low[8] == 0x80);
  CHECK(fscore::format_uuid(low) == "00000000-0000-4000-8000-000000000000");
}

}  // namespace uuid_test
