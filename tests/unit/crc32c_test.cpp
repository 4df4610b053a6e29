// SPDX-License-Identifier: BSD-3-Clause
#include <catch2/catch.hpp>

#include <cstdint>
#include <random>
#include <string_view>
#include <vector>

#include "fscore/crc32c.h"

namespace crc32c_test {

using fscore::crc32c;
using fscore::crc32c_portable;

TEST_CASE("crc32c matches the standard check value", "[crc32c]") {
  constexpr std::string_view kCheck = "123456789";
  // CRC-32C/ISCSI check value (RFC 3720): register ~0 in, inverted out.
  CHECK(~crc32c(~0u, kCheck.data(), kCheck.size()) == 0xE3069283u);
  CHECK(~crc32c_portable(~0u, kCheck.data(), kCheck.size()) == 0xE3069283u);
}

TEST_CASE("crc32c of nothing leaves the register unchanged", "[crc32c]") {
  CHECK(crc32c(0x12345678u, nullptr, 0) == 0x12345678u);
}

TEST_CASE("crc32c hardware and portable paths agree and updates chain", "[crc32c]") {
  std::mt19937 rng(42);
  std::vector<unsigned char> buf(20000);
  for (auto& b : buf) b = static_cast<unsigned char>(rng());
  // Lengths around the interleaved pieces (3 x 32, 3 x 256, 3 x 1024 bytes)
  // and the block sizes the journal checks.
  for (std::size_t len : {0u, 1u, 7u, 8u, 9u, 63u, 64u, 95u, 96u, 97u, 103u, 767u, 768u, 769u, 1000u, 1024u, 3071u,
                          3072u, 3080u, 4095u, 4096u, 4097u, 5000u, 12288u, 19990u}) {
    for (std::size_t align : {0u, 1u, 3u}) {
      if (align + len > buf.size()) continue;
      const auto* p = buf.data() + align;
      const std::uint32_t whole = crc32c(~0u, p, len);
      CHECK(whole == crc32c_portable(~0u, p, len));
      const std::size_t cut = len / 3;
      CHECK(crc32c(crc32c(~0u, p, cut), p + cut, len - cut) == whole);
    }
  }
}

TEST_CASE("crc32c_combine gives the checksum of two parts joined", "[crc32c]") {
  std::vector<std::uint8_t> bytes(5000);
  std::uint32_t x = 12345;
  for (auto& b : bytes) b = static_cast<std::uint8_t>((x = x * 1103515245u + 12345u) >> 16);
  const auto standard = [](const std::uint8_t* p, std::size_t n) { return ~crc32c(~0u, p, n); };
  for (const std::size_t cut : {std::size_t{0}, std::size_t{1}, std::size_t{7}, std::size_t{512}, std::size_t{4095},
                                std::size_t{5000}}) {
    CAPTURE(cut);
    CHECK(fscore::crc32c_combine(standard(bytes.data(), cut), standard(bytes.data() + cut, bytes.size() - cut),
                                 bytes.size() - cut) == standard(bytes.data(), bytes.size()));
  }
  // Parts of a megabyte of zeroes and more: the length's higher bits.
  std::vector<std::uint8_t> big((1 << 20) + 3, 0);
  big.back() = 1;
  CHECK(fscore::crc32c_combine(standard(big.data(), 9), standard(big.data() + 9, big.size() - 9), big.size() - 9) ==
        standard(big.data(), big.size()));
}

}  // namespace crc32c_test
