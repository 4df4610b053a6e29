// Option reading for the command-line front ends: values given as the next
// word or after '=', numbers in range, and every mistake named.
#include <catch2/catch.hpp>

#include <string>

#include "common/args.h"

using nvj::cli::Args;

TEST_CASE("options are read with values and checked", "[args]") {
  Args args("demo", {"--files", "10", "--threads=3", "--keep", "--size", "x"});
  std::string item;
  REQUIRE(args.next(item));
  CHECK(item == "--files");
  CHECK(args.number(item, 1, 100) == 10);
  REQUIRE(args.next(item));
  CHECK(item == "--threads");
  CHECK(args.number(item, 1, 64) == 3);
  REQUIRE(args.next(item));
  CHECK(item == "--keep");
  REQUIRE(args.next(item));
  CHECK_THROWS_WITH(args.number(item, 0, 5), "nvj demo: --size=x: expected a whole number from 0 to 5");
  CHECK_FALSE(args.next(item));

  Args flag("demo", {"--keep=yes"});
  REQUIRE(flag.next(item));
  CHECK_THROWS_WITH(flag.next(item), "nvj demo: --keep takes no value");
  Args missing("attach", {"--name"});
  REQUIRE(missing.next(item));
  CHECK_THROWS_WITH(missing.value(item), "nvj attach: --name needs a value");
  CHECK_THROWS_WITH(missing.unknown("--bogus"), "nvj attach: unknown option '--bogus' (nvj attach --help)");
}
