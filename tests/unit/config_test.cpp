// SPDX-License-Identifier: BSD-3-Clause
#include <catch2/catch.hpp>

#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "server/lab/config.h"

namespace config_test {

using nvj::ConfigError;
using nvj::ConfigParser;
using Params = std::vector<std::pair<std::string, std::string>>;

namespace {

nvj::LabConfig parse(const Params& params) {
  ConfigParser parser;
  for (const auto& [k, v] : params) parser.set(k, v);
  return parser.finish();
}

std::string error_of(const Params& params) {
  try {
    parse(params);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "accepted";
}

}  // namespace

TEST_CASE("no parameters: everything defaults", "[config]") {
  const auto config = parse({});
  CHECK_FALSE(config.data.size);
  CHECK_FALSE(config.data.file);
  CHECK_FALSE(config.journal.size);
  CHECK_FALSE(config.journal.file);
}

TEST_CASE("parameters are taken and files made absolute", "[config]") {
  const auto config = parse({{"data", "4G"}, {"journal", "256M"}, {"data-file", "d.img"}, {"journal-file", "/x/../j.img"}});
  CHECK(*config.data.size == 4ull << 30);
  CHECK(*config.journal.size == 256ull << 20);
  CHECK(*config.data.file == (std::filesystem::current_path() / "d.img").string());
  CHECK(*config.journal.file == "/j.img");
}

TEST_CASE("every bad parameter is refused naming the parameter", "[config]") {
  CHECK_THAT(error_of({{"size", "1G"}}), Catch::StartsWith("size=1G: unknown parameter 'size'"));
  CHECK_THAT(error_of({{"data", "12Q"}}), Catch::StartsWith("data=12Q: '12Q' is not a size"));
  CHECK_THAT(error_of({{"data", "0"}}), Catch::StartsWith("data=0: the size must not be zero"));
  CHECK_THAT(error_of({{"data", "-5M"}}), Catch::StartsWith("data=-5M:") && Catch::Contains("negative"));
  CHECK_THAT(error_of({{"data", "1000"}}), Catch::StartsWith("data=1000:") && Catch::Contains("multiple of 512"));
  CHECK_THAT(error_of({{"journal", "0"}}), Catch::StartsWith("journal=0: the size must not be zero"));
  CHECK_THAT(error_of({{"journal", "512K"}}), Catch::StartsWith("journal=512K: a journal must be at least 1 MiB"));
  CHECK_THAT(error_of({{"journal", "40G"}}), Catch::StartsWith("journal=40G: a journal may be at most"));
  CHECK_THAT(error_of({{"data", "1P"}}), Catch::StartsWith("data=1P: a sparse memory export may be at most 256 TiB"));
  CHECK(error_of({{"data", "1P"}, {"data-file", "/tmp/x"}}) == "accepted");
  CHECK_THAT(error_of({{"data", "1G"}, {"data", "2G"}}), Catch::StartsWith("data=2G: 'data' is given twice"));
  CHECK_THAT(error_of({{"data-file", ""}}), Catch::StartsWith("data-file=: the path is empty"));
  CHECK_THAT(error_of({{"data-model", "tape"}}), Catch::StartsWith("data-model=tape: unknown model 'tape'"));
  CHECK_THAT(error_of({{"journal-model", "nvram:latency=fast"}}),
             Catch::StartsWith("journal-model=nvram:latency=fast: nvram latency=fast: 'fast' is not a duration"));
  CHECK_THAT(error_of({{"data-model", "hdd:rpmx=1"}}),
             Catch::StartsWith("data-model=hdd:rpmx=1: unknown hdd parameter 'rpmx'"));
  CHECK_THAT(error_of({{"data-model", "hdd"}, {"data-model", "ssd"}}), Catch::Contains("given twice"));
  CHECK(error_of({{"data-model", "ssd:cache=off"}, {"journal-model", "none"}}) == "accepted");
  CHECK_THAT(error_of({{"crash-log", "64M"}}), Catch::StartsWith("crash-log=64M: power cuts come through the control"));
  CHECK_THAT(error_of({{"crash-log", "4K"}, {"control", "/run/x.sock"}}), Catch::Contains("must be at least 1 MiB"));
  CHECK(error_of({{"crash-log", "64M"}, {"control", "/run/x.sock"}}) == "accepted");
  CHECK_THAT(error_of({{"stats", "maybe"}}), Catch::StartsWith("stats=maybe: expected on or off"));
  CHECK_THAT(error_of({{"fs-free", "random"}}), Catch::StartsWith("fs-free=random: expected zeroes or old-data"));
  CHECK_THAT(error_of({{"fs-free", "old-data"}, {"fs", "none"}}),
             Catch::StartsWith("fs-free=old-data: formats the filesystem, but fs=none serves blank disks"));
  CHECK(parse({{"fs-free", "old-data"}}).fs.free_old_data);
  CHECK_FALSE(parse({{"fs-free", "zeroes"}}).fs.free_old_data);
  CHECK_FALSE(parse({{"stats", "off"}}).stats);
  CHECK_THAT(error_of({{"data-file", "/a/b.img"}, {"journal-file", "/a/./b.img"}}),
             Catch::StartsWith("journal-file=/a/./b.img: is the same file as data-file"));
}

TEST_CASE("metrics= takes [ADDRESS:]PORT, loopback unless an address is written", "[config]") {
  auto address = [](const std::string& value) {
    const auto config = parse({{"metrics", value}});
    REQUIRE(config.metrics);
    return std::pair{config.metrics->host, config.metrics->port};
  };
  CHECK_FALSE(parse({}).metrics);
  CHECK(address("9630") == std::pair{std::string(), std::uint16_t{9630}});
  CHECK(address(":9630") == std::pair{std::string(), std::uint16_t{9630}});
  CHECK(address("0.0.0.0:1") == std::pair{std::string("0.0.0.0"), std::uint16_t{1}});
  CHECK(address("lab-host.example:65535") ==
        std::pair{std::string("lab-host.example"), std::uint16_t{65535}});
  CHECK(address("[::1]:9630") == std::pair{std::string("::1"), std::uint16_t{9630}});
  CHECK(address("[::]:80") == std::pair{std::string("::"), std::uint16_t{80}});
  CHECK(parse({{"metrics", "[::1]:9630"}}).metrics->text == "[::1]:9630");
  // Without control=: the metrics listener needs no control socket.
  CHECK(error_of({{"metrics", "9630"}, {"data", "1G"}}) == "accepted");

  CHECK_THAT(error_of({{"metrics", ""}}), Catch::StartsWith("metrics=: no port: expected [ADDRESS:]PORT"));
  CHECK_THAT(error_of({{"metrics", "127.0.0.1:"}}), Catch::StartsWith("metrics=127.0.0.1:: no port"));
  CHECK_THAT(error_of({{"metrics", "127.0.0.1"}}),
             Catch::StartsWith("metrics=127.0.0.1: '127.0.0.1' is not a port: expected [ADDRESS:]PORT"));
  CHECK_THAT(error_of({{"metrics", "localhost"}}),
             Catch::StartsWith("metrics=localhost: 'localhost' is not a port"));
  CHECK_THAT(error_of({{"metrics", "host:http"}}), Catch::StartsWith("metrics=host:http: 'http' is not a port"));
  CHECK_THAT(error_of({{"metrics", ":+80"}}), Catch::StartsWith("metrics=:+80: '+80' is not a port"));
  CHECK_THAT(error_of({{"metrics", ":-1"}}), Catch::StartsWith("metrics=:-1: '-1' is not a port"));
  CHECK_THAT(error_of({{"metrics", ":0"}}),
             Catch::StartsWith("metrics=:0: port 0 is out of range: a port is 1 to 65535"));
  CHECK_THAT(error_of({{"metrics", "65536"}}), Catch::StartsWith("metrics=65536: port 65536 is out of range"));
  CHECK_THAT(error_of({{"metrics", "1:99999999999999999999"}}), Catch::Contains("is out of range"));
  CHECK_THAT(error_of({{"metrics", "::1:9630"}}),
             Catch::StartsWith("metrics=::1:9630: an IPv6 address goes in brackets, e.g. [::1]:9630"));
  CHECK_THAT(error_of({{"metrics", "[::1]"}}), Catch::StartsWith("metrics=[::1]: an address in brackets must be "
                                                                 "followed by :PORT"));
  CHECK_THAT(error_of({{"metrics", "[::1:9630"}}), Catch::Contains("must be followed by :PORT"));
  CHECK_THAT(error_of({{"metrics", "[]:9630"}}),
             Catch::StartsWith("metrics=[]:9630: the address in brackets is empty"));
  CHECK_THAT(error_of({{"metrics", "9630"}, {"metrics", "9631"}}),
             Catch::StartsWith("metrics=9631: 'metrics' is given twice"));
}

}  // namespace config_test
