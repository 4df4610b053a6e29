// SPDX-License-Identifier: BSD-3-Clause
// common/errno_name.h.
#include <catch2/catch.hpp>

#include <cerrno>

#include "common/errno_name.h"

namespace errno_name_test {

TEST_CASE("errno values have their C names and messages", "[errno]") {
  CHECK(nvj::errno_name(ENOSPC) == "ENOSPC");
  CHECK(nvj::errno_name(EDQUOT) == "EDQUOT");
  CHECK(nvj::errno_name(ENAMETOOLONG) == "ENAMETOOLONG");  // not in the old hand-kept table
  CHECK(nvj::errno_name(99999) == "errno 99999");
  CHECK(nvj::errno_message(ENOSPC) == "No space left on device");
}

}  // namespace errno_name_test
