#include <catch2/catch.hpp>

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "server/lab/config.h"

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
  CHECK_FALSE(parse({{"stats", "off"}}).stats);
  CHECK_THAT(error_of({{"data-file", "/a/b.img"}, {"journal-file", "/a/./b.img"}}),
             Catch::StartsWith("journal-file=/a/./b.img: is the same file as data-file"));
}
