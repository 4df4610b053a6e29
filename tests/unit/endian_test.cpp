// SPDX-License-Identifier: BSD-3-Clause
#include <catch2/catch.hpp>

#include <array>
#include <cstdint>

#include "fscore/endian.h"

namespace endian_test {

TEST_CASE("little- and big-endian loads and stores mirror the disk layout", "[endian]") {
  std::array<unsigned char, 9> buf{};
  fscore::store_le<std::uint32_t>(buf.data() + 1, 0xC03B3998u);
  CHECK(buf[1] == 0x98);
  CHECK(buf[4] == 0xC0);
  CHECK(fscore::load_le<std::uint32_t>(buf.data() + 1) == 0xC03B3998u);

  fscore::store_be<std::uint32_t>(buf.data() + 1, 0xC03B3998u);  // jbd2's h_magic
  CHECK(buf[1] == 0xC0);
  CHECK(buf[4] == 0x98);
  CHECK(fscore::load_be<std::uint32_t>(buf.data() + 1) == 0xC03B3998u);

  fscore::store_be<std::uint64_t>(buf.data(), 0x0102030405060708ull);
  CHECK(buf[0] == 1);
  CHECK(buf[7] == 8);
  CHECK(fscore::load_be<std::uint64_t>(buf.data()) == 0x0102030405060708ull);
  fscore::store_le<std::uint16_t>(buf.data(), 0xEF53);  // ext4's s_magic
  CHECK(buf[0] == 0x53);
  CHECK(fscore::load_le<std::uint16_t>(buf.data()) == 0xEF53);
}

}  // namespace endian_test
