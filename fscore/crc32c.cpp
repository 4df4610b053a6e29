// SPDX-License-Identifier: BSD-3-Clause
#include "fscore/crc32c.h"

#include <array>
#include <bit>
#include <cstring>

namespace fscore {
namespace {

constexpr std::uint32_t kPolyReflected = 0x82F63B78u;
static_assert(std::endian::native == std::endian::little, "slice-by-8 layout assumes a little-endian host");

// Slice-by-8 tables: table[k][b] is the CRC of byte b followed by k zero bytes.
constexpr auto make_tables() {
  std::array<std::array<std::uint32_t, 256>, 8> t{};
  for (std::uint32_t b = 0; b < 256; ++b) {
    std::uint32_t c = b;
    for (int i = 0; i < 8; ++i) c = (c >> 1) ^ ((c & 1u) ? kPolyReflected : 0u);
    t[0][b] = c;
  }
  for (std::size_t k = 1; k < 8; ++k)
    for (std::size_t b = 0; b < 256; ++b) t[k][b] = (t[k - 1][b] >> 8) ^ t[0][t[k - 1][b] & 0xFFu];
  return t;
}

constexpr auto kTables = make_tables();

#if defined(__x86_64__)
// One crc32 instruction takes three cycles before the next one on the same
// register can start, but the core can start one per cycle: a single stream
// runs at a third of the speed the unit allows. So a long buffer is cut into
// three equal pieces whose registers advance together, then joined:
// register(A|B) = shift(register(A), |B|) ^ register_from_0(B), where shift
// is what |B| zero bytes do to a register, a linear map kept as four byte
// tables per piece length (ZeroShift).
class ZeroShift {
 public:
  explicit ZeroShift(std::size_t zero_bytes) {
    static constexpr unsigned char kZeros[64] = {};
    std::array<std::uint32_t, 32> basis{};
    for (int bit = 0; bit < 32; ++bit) {
      std::uint32_t c = std::uint32_t{1} << bit;
      for (std::size_t left = zero_bytes; left > 0;) {
        const std::size_t n = left < sizeof kZeros ? left : sizeof kZeros;
        c = crc32c_portable(c, kZeros, n);
        left -= n;
      }
      basis[static_cast<std::size_t>(bit)] = c;
    }
    for (std::size_t k = 0; k < 4; ++k)
      for (std::uint32_t b = 0; b < 256; ++b) {
        std::uint32_t v = 0;
        for (std::size_t j = 0; j < 8; ++j)
          if ((b >> j) & 1u) v ^= basis[8 * k + j];
        table_[k][b] = v;
      }
  }
  std::uint32_t operator()(std::uint32_t c) const noexcept {
    return table_[0][c & 0xFFu] ^ table_[1][(c >> 8) & 0xFFu] ^ table_[2][(c >> 16) & 0xFFu] ^ table_[3][c >> 24];
  }

 private:
  std::array<std::array<std::uint32_t, 256>, 4> table_{};
};

// Piece lengths, longest first: a 4 KiB block goes 3 x 1024, 3 x 256, then
// 2 x (3 x 32) and 64 bytes in one stream.
constexpr std::array<std::size_t, 3> kPieces = {1024, 256, 32};

struct ZeroShifts {
  std::array<ZeroShift, 3> shift{ZeroShift(kPieces[0]), ZeroShift(kPieces[1]), ZeroShift(kPieces[2])};
};

const ZeroShifts& zero_shifts() {
  static const ZeroShifts shifts;
  return shifts;
}

__attribute__((target("sse4.2"))) inline std::uint64_t load_crc(std::uint64_t c, const unsigned char* p) noexcept {
  std::uint64_t v;
  std::memcpy(&v, p, 8);
  return __builtin_ia32_crc32di(c, v);
}

__attribute__((target("sse4.2"))) std::uint32_t crc32c_sse42(std::uint32_t crc, const unsigned char* p,
                                                              std::size_t n) noexcept {
  std::uint64_t c = crc;
  if (n >= 3 * kPieces.back()) {
    const ZeroShifts& shifts = zero_shifts();
    for (std::size_t level = 0; level < kPieces.size(); ++level) {
      const std::size_t piece = kPieces[level];
      const ZeroShift& shift = shifts.shift[level];
      while (n >= 3 * piece) {
        std::uint64_t c1 = 0;
        std::uint64_t c2 = 0;
        for (std::size_t i = 0; i < piece; i += 8) {
          c = load_crc(c, p + i);
          c1 = load_crc(c1, p + piece + i);
          c2 = load_crc(c2, p + 2 * piece + i);
        }
        c = shift(shift(static_cast<std::uint32_t>(c)) ^ static_cast<std::uint32_t>(c1)) ^ static_cast<std::uint32_t>(c2);
        p += 3 * piece;
        n -= 3 * piece;
      }
    }
  }
  while (n >= 8) {
    c = load_crc(c, p);
    p += 8;
    n -= 8;
  }
  auto c32 = static_cast<std::uint32_t>(c);
  while (n-- > 0) c32 = __builtin_ia32_crc32qi(c32, *p++);
  return c32;
}

bool have_sse42() noexcept {
  static const bool have = __builtin_cpu_supports("sse4.2");
  return have;
}
#endif

}  // namespace

std::uint32_t crc32c_portable(std::uint32_t crc, const void* data, std::size_t n) noexcept {
  const auto* p = static_cast<const unsigned char*>(data);
  while (n >= 8) {
    std::uint32_t lo;
    std::uint32_t hi;
    std::memcpy(&lo, p, 4);
    std::memcpy(&hi, p + 4, 4);
    lo ^= crc;  // little-endian host assumed by the slice layout (x86-64, arm64)
    crc = kTables[7][lo & 0xFFu] ^ kTables[6][(lo >> 8) & 0xFFu] ^ kTables[5][(lo >> 16) & 0xFFu] ^
          kTables[4][lo >> 24] ^ kTables[3][hi & 0xFFu] ^ kTables[2][(hi >> 8) & 0xFFu] ^
          kTables[1][(hi >> 16) & 0xFFu] ^ kTables[0][hi >> 24];
    p += 8;
    n -= 8;
  }
  while (n-- > 0) crc = (crc >> 8) ^ kTables[0][(crc ^ *p++) & 0xFFu];
  return crc;
}

std::uint32_t crc32c(std::uint32_t crc, const void* data, std::size_t n) noexcept {
#if defined(__x86_64__)
  if (have_sse42()) return crc32c_sse42(crc, static_cast<const unsigned char*>(data), n);
#endif
  return crc32c_portable(crc, data, n);
}

namespace {

constexpr std::uint32_t kPoly = 0x82F63B78u;  // reflected

// a * b modulo the polynomial, bit-reflected (x^0 is the top bit).
std::uint32_t multiply_mod(std::uint32_t a, std::uint32_t b) noexcept {
  std::uint32_t product = 0;
  for (std::uint32_t bit = 1u << 31; bit != 0; bit >>= 1) {
    if ((a & bit) != 0) product ^= b;
    b = (b & 1) != 0 ? (b >> 1) ^ kPoly : b >> 1;
  }
  return product;
}

}  // namespace

std::uint32_t crc32c_combine(std::uint32_t crc_a, std::uint32_t crc_b, std::uint64_t length_b) noexcept {
  // Appending length_b bytes multiplies A's remainder by x^(8 length_b);
  // the entry and exit inversions cancel between the two standard CRCs.
  // x^(8n) as the product of x^(8 2^k) over n's bits, from a table made
  // once by squaring.
  static const std::array<std::uint32_t, 64> kPowers = [] {
    std::array<std::uint32_t, 64> t{};
    t[0] = 1u << 23;  // x^8
    for (std::size_t k = 1; k < t.size(); ++k) t[k] = multiply_mod(t[k - 1], t[k - 1]);
    return t;
  }();
  std::uint32_t shift = 1u << 31;  // x^0
  for (std::size_t k = 0; length_b != 0; ++k, length_b >>= 1)
    if ((length_b & 1) != 0) shift = multiply_mod(shift, kPowers[k]);
  return multiply_mod(shift, crc_a) ^ crc_b;
}

}  // namespace fscore
