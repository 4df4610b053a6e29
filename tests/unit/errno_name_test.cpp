// SPDX-License-Identifier: BSD-3-Clause
// common/errno_name.h.
#include <catch2/catch.hpp>

#include <cerrno>
#include <string>

#include "common/errno_name.h"

namespace errno_name_test {

TEST_CASE("errno values have their C names and messages", "[errno]") {
  CHECK(nvj::errno_name(ENOSPC) == "ENOSPC");
  CHECK(nvj::errno_name(EDQUOT) == "EDQUOT");
  CHECK(nvj::errno_name(ENAMETOOLONG) == "ENAMETOOLONG");  // not in the old hand-kept table
  CHECK(nvj::errno_name(99999) == "errno 99999");
  CHECK(nvj::errno_message(ENOSPC) == "No space left on device");
}

TEST_CASE("a failed call's error names the call and errno's message", "[errno]") {
  errno = ENOENT;
  CHECK(std::string(nvj::errno_error("open /x").what()) == "open /x: No such file or directory");
}

}  // namespace errno_name_test
