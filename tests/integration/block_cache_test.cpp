// SPDX-License-Identifier: BSD-3-Clause
// drop_block_cache (tools/nvj/host/devices/loop_device.h) on a real loop
// device held open: pages a buffered read put in the host's cache are all
// gone after it (mincore, as cached_pages counts them), and a read after the
// file under the device changed sees the new bytes, where before the drop it
// saw the old. Needs root (loop devices): hidden from the main run, registered on
// its own with a skip where it cannot run.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <fstream>
#include <string>
#include <vector>

#include "common/unique_fd.h"
#include "tests/support/temp_dir.h"
#include "tools/nvj/host/devices/loop_device.h"

namespace block_cache_test {

namespace {

std::string read_at(int fd, off_t at, std::size_t n) {
  std::string b(n, '\0');
  REQUIRE(::pread(fd, b.data(), n, at) == static_cast<ssize_t>(n));
  return b;
}

struct Loop {
  std::string device;
  explicit Loop(const std::string& file) : device(nvj::cli::loop_attach(file)) {}
  ~Loop() { nvj::cli::loop_detach(device); }
};

}  // namespace

TEST_CASE("drop_block_cache leaves no page of a loop device cached, and the next read sees the file as it is now",
          "[.][root][loop]") {
  const nvj::test::TempDir dir;
  const std::string file = (dir.path / "disk.img").string();
  {
    std::ofstream out(file, std::ios::binary);
    const std::string a(1 << 20, 'a');
    out.write(a.data(), static_cast<std::streamsize>(a.size()));
  }
  const Loop loop(file);
  // Held open, as a mount holds it: the kernel drops a device's cache by
  // itself only when its last opener closes it.
  const nvj::UniqueFd held(::open(loop.device.c_str(), O_RDONLY | O_CLOEXEC));
  REQUIRE(held.get() >= 0);
  CHECK(nvj::cli::cached_pages(loop.device) == 0);
  CHECK(read_at(held.get(), 36 * 1024, 1024) == std::string(1024, 'a'));
  CHECK(read_at(held.get(), 512 * 1024, 4096) == std::string(4096, 'a'));
  CHECK(nvj::cli::cached_pages(loop.device) >= 2);

  // The file changes under the device, as a restored export does: the
  // cache still serves the old bytes until it is dropped.
  {
    std::fstream out(file, std::ios::binary | std::ios::in | std::ios::out);
    out.seekp(36 * 1024);
    const std::string b(1024, 'b');
    out.write(b.data(), static_cast<std::streamsize>(b.size()));
  }
  ::sync();
  CHECK(read_at(held.get(), 36 * 1024, 1024) == std::string(1024, 'a'));
  nvj::cli::drop_block_cache(loop.device);
  CHECK(nvj::cli::cached_pages(loop.device) == 0);
  CHECK(read_at(held.get(), 36 * 1024, 1024) == std::string(1024, 'b'));
}

TEST_CASE("cached_pages and drop_block_cache name a device they cannot open", "[.][root][loop]") {
  CHECK_THROWS_WITH(nvj::cli::cached_pages("/dev/nvj-no-such-device"), Catch::Contains("/dev/nvj-no-such-device"));
  CHECK_THROWS_WITH(nvj::cli::drop_block_cache("/dev/nvj-no-such-device"), Catch::Contains("/dev/nvj-no-such-device"));
}

}  // namespace block_cache_test
