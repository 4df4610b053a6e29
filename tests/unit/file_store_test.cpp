// SPDX-License-Identifier: BSD-3-Clause
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "server/store/file_store.h"
#include "tests/support/temp_dir.h"
#include "server/store/io_error.h"

namespace file_store_test {

namespace fs = std::filesystem;
using nvj::Extent;
using nvj::FileStore;

namespace {

using nvj::test::TempDir;

std::string open_error(const std::string& path, std::optional<std::uint64_t> size) {
  try {
    FileStore::open(path, size, 1 << 20);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "opened";
}

std::uint64_t allocated_bytes(const std::string& path) {
  struct stat st {};
  REQUIRE(::stat(path.c_str(), &st) == 0);
  return static_cast<std::uint64_t>(st.st_blocks) * 512;
}

}  // namespace

TEST_CASE("a missing file is created sparse with the asked-for size", "[file_store]") {
  TempDir dir;
  const auto path = dir.file("d.img");
  auto s = FileStore::open(path, 256ull << 20, 1 << 20);
  CHECK(s->created());
  CHECK(s->size() == 256ull << 20);
  CHECK(fs::file_size(path) == 256ull << 20);
  CHECK(allocated_bytes(path) == 0);
  auto d = FileStore::open(dir.file("default.img"), std::nullopt, 1 << 20);
  CHECK(d->size() == 1 << 20);
}

TEST_CASE("an existing file keeps its bytes and is extended but never truncated", "[file_store]") {
  TempDir dir;
  const auto path = dir.file("d.img");
  const std::vector<char> data(8192, 'x');
  {
    auto s = FileStore::open(path, 1 << 20, 1 << 20);
    s->write(data.data(), 8192, 4096, false);
    s->flush();
  }
  {
    auto s = FileStore::open(path, std::nullopt, 64 << 20);  // no size: the file's own
    CHECK_FALSE(s->created());
    CHECK(s->size() == 1 << 20);
  }
  CHECK_THAT(open_error(path, 512 * 1024), Catch::Contains("holds 1 MiB, more than the 512 KiB asked for") &&
                                               Catch::Contains("never truncated"));
  CHECK(fs::file_size(path) == 1 << 20);
  auto s = FileStore::open(path, 2 << 20, 1 << 20);
  CHECK(s->size() == 2 << 20);
  std::vector<char> back(8192);
  s->read(back.data(), 8192, 4096);
  CHECK(back == data);
}

TEST_CASE("bad files are refused with the reason", "[file_store]") {
  TempDir dir;
  CHECK(open_error(dir.path.string(), std::nullopt) == "is a directory, not a file");
  CHECK_THAT(open_error("/dev/null", std::nullopt), Catch::Contains("is not a regular file"));
  CHECK_THAT(open_error(dir.file("no/such/dir.img"), std::nullopt), Catch::StartsWith("cannot create"));
  std::ofstream(dir.file("odd.img")) << "123";
  CHECK_THAT(open_error(dir.file("odd.img"), std::nullopt), Catch::Contains("not a multiple of 512"));
  CHECK(fs::file_size(dir.file("odd.img")) == 3);  // untouched
}

TEST_CASE("a file is locked while a store has it open", "[file_store]") {
  TempDir dir;
  const auto path = dir.file("d.img");
  auto first = FileStore::open(path, 1 << 20, 1 << 20);
  CHECK_THAT(open_error(path, std::nullopt), Catch::Contains("in use by another export or server"));
  fs::create_hard_link(path, dir.file("link.img"));
  CHECK_THAT(open_error(dir.file("link.img"), std::nullopt), Catch::Contains("in use"));
  first.reset();
  CHECK(open_error(path, std::nullopt) == "opened");
}

TEST_CASE("trim and zero punch holes that extents report", "[file_store]") {
  TempDir dir;
  const auto path = dir.file("d.img");
  auto s = FileStore::open(path, 16 << 20, 1 << 20);
  const std::vector<char> data(1 << 20, 'y');
  s->write(data.data(), 1 << 20, 0, false);
  s->write(data.data(), 1 << 20, 4 << 20, true);  // durable (O_DSYNC)
  s->trim(256 << 10, 256 << 10, false);
  s->zero(4096, 4 << 20, true);

  std::vector<char> back(1 << 20);
  s->read(back.data(), 1 << 20, 0);
  for (std::size_t i = 0; i < back.size(); ++i) {
    const bool punched = i >= (256u << 10) && i < (512u << 10);
    REQUIRE(back[i] == (punched ? 0 : 'y'));
  }
  std::vector<Extent> e;
  s->extents(0, 16 << 20, [&](const Extent& x) { e.push_back(x); });
  REQUIRE(e.size() >= 4);
  CHECK((e[0].offset == 0 && !e[0].hole && e[0].length == 256 << 10));
  CHECK((e[1].offset == 256 << 10 && e[1].hole));
  std::uint64_t total = 0;
  for (const auto& x : e) total += x.length;
  CHECK(total == 16 << 20);
  CHECK(e.back().hole);
}

TEST_CASE("io errors carry the errno and glibc's untranslated text", "[file_store]") {
  const nvj::IoError e(ENOSPC, "pwrite");
  CHECK(e.error() == ENOSPC);
  CHECK(std::string(e.what()) == "pwrite: No space left on device");
  CHECK(nvj::errno_text(99999) == "error 99999");
}

}  // namespace file_store_test
