// SPDX-License-Identifier: BSD-3-Clause
// AppendFile (server/record/append_file.h): with O_DIRECT or through the page
// cache, appends of any size land front to back, whole blocks from the
// caller's memory follow them, and finish() leaves the file exactly as long
// as asked; a file never finished holds whole blocks only; an existing file
// is refused.
#include <catch2/catch.hpp>

#include <cstdint>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "fscore/record/frame_buffer.h"
#include "server/record/append_file.h"
#include "tests/support/file_bytes.h"
#include "tests/support/temp_dir.h"

namespace append_file_test {

using nvj::AppendFile;
using nvj::test::file_bytes;
using nvj::test::TempDir;

TEST_CASE("appends of any size land front to back, with or without O_DIRECT", "[recording]") {
  TempDir dir;
  for (const bool direct : {true, false}) {
    CAPTURE(direct);
    const std::string path = dir.file(direct ? "direct" : "buffered");
    std::vector<std::uint8_t> want;
    {
      AppendFile f(path, direct);
      std::uint64_t salt = 1;
      // Pieces that cross blocks and the 1 MiB buffer at odd places.
      for (const std::size_t n : {std::size_t{1}, std::size_t{4095}, std::size_t{4096}, std::size_t{70000},
                                  AppendFile::kBuffer + 17, std::size_t{3 * 4096 + 5}, std::size_t{0}}) {
        std::vector<std::uint8_t> piece(n);
        for (auto& b : piece) b = static_cast<std::uint8_t>(salt++ * 31);
        f.append(piece.data(), piece.size());
        want.insert(want.end(), piece.begin(), piece.end());
      }
      CHECK(f.size() == want.size());
      f.finish();
    }
    CHECK(file_bytes(path) == want);
  }
}

TEST_CASE("a file never finished holds whole blocks only, and an existing file is refused", "[recording]") {
  TempDir dir;
  const std::string path = dir.file("cut");
  {
    AppendFile f(path, true);
    const std::vector<std::uint8_t> piece(AppendFile::kBuffer + 100, 7);
    f.append(piece.data(), piece.size());
  }  // destroyed without finish(): the buffer's last 100 bytes never reach the file
  CHECK(std::filesystem::file_size(path) == AppendFile::kBuffer);
  CHECK_THROWS_WITH(AppendFile(path, true), Catch::Contains("exists: a recording never overwrites a file"));
  CHECK_THROWS_WITH(AppendFile(dir.file("no/such/folder"), false), Catch::Contains("cannot create"));
  CHECK(std::filesystem::file_size(path) == AppendFile::kBuffer);
}

TEST_CASE("whole blocks follow appends, and finish cuts the zeroes that filled the last one", "[recording]") {
  TempDir dir;
  for (const bool direct : {true, false}) {
    CAPTURE(direct);
    const std::string path = dir.file(direct ? "blocks-direct" : "blocks-buffered");
    std::vector<std::uint8_t> want;
    {
      AppendFile f(path, direct);
      const std::vector<std::uint8_t> start(AppendFile::kBuffer + 3 * AppendFile::kBlock, 5);
      f.append(start.data(), start.size());  // leaves 3 blocks in its buffer
      want = start;
      fscore::record::FrameBuffer blocks;
      for (std::size_t i = 0; i < 5 * AppendFile::kBlock; ++i) *blocks.extend(1) = static_cast<std::uint8_t>(i * 7);
      f.append_blocks(blocks.data(), blocks.size());
      want.insert(want.end(), blocks.data(), blocks.data() + blocks.size());
      const std::vector<std::uint8_t> odd(10, 1);
      f.append(odd.data(), odd.size());
      CHECK_THROWS_AS(f.append_blocks(blocks.data(), blocks.size()), std::logic_error);  // 10 bytes in its buffer
      f.append(blocks.data(), AppendFile::kBlock - odd.size());
      CHECK_THROWS_AS(f.append_blocks(blocks.data() + 1, AppendFile::kBlock), std::logic_error);  // not aligned
      CHECK_THROWS_AS(f.append_blocks(blocks.data(), 100), std::logic_error);                   // not whole
      f.append_blocks(blocks.data(), AppendFile::kBlock);
      want.insert(want.end(), odd.begin(), odd.end());
      want.insert(want.end(), blocks.data(), blocks.data() + AppendFile::kBlock - odd.size());
      want.insert(want.end(), blocks.data(), blocks.data() + AppendFile::kBlock);
      CHECK(f.size() == want.size());
      want.resize(want.size() - 1000);  // the last block's end was padding
      f.finish(want.size());
    }
    CHECK(file_bytes(path) == want);
  }
}

}  // namespace append_file_test
