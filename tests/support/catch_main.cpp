// SPDX-License-Identifier: BSD-3-Clause
// The main of the Catch2 test programs (unit_tests, integration_tests):
// Catch2's runner, compiled once for both. The server's info lines are not
// test output: spdlog logs warnings and errors only.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>
#include <spdlog/spdlog.h>

int main(int argc, char* argv[]) {
  spdlog::set_level(spdlog::level::warn);
  return Catch::Session().run(argc, argv);
}
