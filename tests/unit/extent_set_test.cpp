// SPDX-License-Identifier: BSD-3-Clause
// ExtentSet: the byte ranges a drive model holds in its cache, each with
// the tag of the write that put it there.
#include <catch2/catch.hpp>

#include "server/model/extent_set.h"

namespace extent_set_test {

using nvj::ExtentSet;

TEST_CASE("extent sets merge, split and find the elevator's next stop", "[extent_set]") {
  ExtentSet s;
  s.insert(100, 200);
  s.insert(300, 400);
  s.insert(200, 250);  // touches: merges
  CHECK(s.size() == 2);
  CHECK(s.bytes() == 250);
  CHECK(s.contains(120, 250));
  CHECK_FALSE(s.contains(120, 260));
  s.erase(150, 350);
  CHECK(s.size() == 2);
  CHECK(s.bytes() == 100);
  CHECK(s.next_from(0)->begin == 100);
  CHECK(s.next_from(160)->begin == 350);
  CHECK(s.next_from(500)->begin == 100);  // wraps
  s.insert(0, 1000);
  CHECK(s.size() == 1);
  CHECK(s.bytes() == 1000);
}

TEST_CASE("extent sets keep each byte's tag and merge only ranges of one tag", "[extent_set]") {
  ExtentSet s;
  s.insert(0, 100, 1);
  s.insert(100, 200, 0);  // touches, other tag: stays apart
  s.insert(200, 300, 0);  // same tag: merges
  CHECK(s.size() == 2);
  CHECK(s.bytes() == 300);
  CHECK(s.bytes(1) == 100);
  CHECK(s.bytes(0) == 200);
  CHECK(s.contains(50, 250));  // across the tags
  // A newer write takes the bytes it covers, whatever their tag.
  s.insert(50, 150, 2);
  CHECK(s.bytes() == 300);
  CHECK(s.bytes(1) == 50);
  CHECK(s.bytes(2) == 100);
  CHECK(s.bytes(0) == 150);
  CHECK(s.size() == 3);
  const auto r = s.next_from(60);
  CHECK(r->begin == 50);
  CHECK(r->end == 150);
  CHECK(r->tag == 2);
  CHECK(s.next_from(160)->tag == 0);
  CHECK(s.contains(0, 300));
  s.erase(100, 120);  // a hole in the middle range
  CHECK_FALSE(s.contains(0, 300));
  CHECK(s.contains(0, 100));
  CHECK(s.bytes(2) == 80);
  CHECK(s.size() == 4);
  s.insert(0, 300, 3);  // one write over all of it
  CHECK(s.size() == 1);
  CHECK(s.bytes(3) == 300);
  CHECK(s.bytes(0) + s.bytes(1) + s.bytes(2) == 0);
}

}  // namespace extent_set_test
