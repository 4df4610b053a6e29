// SPDX-License-Identifier: BSD-3-Clause
// What a device tells the host: each model's defaults, the per-export
// overrides as parameters, their errors, and nvj attach's --scheduler.
#include <catch2/catch.hpp>

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>

#include "server/device/device.h"
#include "server/lab/config.h"
#include "server/model/device_traits.h"
#include "server/model/make_model.h"
#include "server/model/model_spec.h"
#include "server/store/memory_store.h"
#include "tools/nvj/host/devices/attach.h"
#include "tools/nvj/host/devices/block_queue.h"

namespace device_traits_test {

using nvj::DeviceTraits;

namespace {

DeviceTraits of(const std::string& spec) { return nvj::make_model(nvj::ModelSpec::parse(spec), 1ull << 30)->traits(); }

std::string config_error(const std::string& key, const std::string& value) {
  nvj::ConfigParser parser;
  try {
    parser.set(key, value);
    parser.finish();
  } catch (const nvj::ConfigError& e) {
    return e.what();
  }
  return "accepted";
}

}  // namespace

TEST_CASE("each model tells the host what a real device of its kind would", "[traits]") {
  CHECK(of("hdd") == DeviceTraits{true, true, false, false, 512, 4096});
  CHECK(of("hdd:cache=off") == DeviceTraits{true, false, false, false, 512, 4096});
  CHECK(of("ssd") == DeviceTraits{false, true, true, true, 512, 4096});
  CHECK(of("ssd:cache=off") == DeviceTraits{false, false, true, true, 512, 4096});
  CHECK(of("nvram") == DeviceTraits{false, false, false, false, 512, 512});
  // The write cache a model reports is the one that loses writes at a power cut.
  for (const char* spec : {"hdd", "hdd:cache=off", "ssd", "ssd:cache=off", "nvram"}) {
    CAPTURE(spec);
    const auto model = nvj::make_model(nvj::ModelSpec::parse(spec), 1ull << 30);
    CHECK(model->traits().write_back == model->volatile_cache());
  }
  CHECK(nvj::untimed_traits(nvj::Durability::on_flush).write_back);
  CHECK_FALSE(nvj::untimed_traits(nvj::Durability::on_acknowledge).write_back);
  CHECK(of("hdd").describe() == "rotational, write-back cache, no trim, no zero, sectors 512/4096");

  // A device starts with its model's, and keeps what set_traits gives it.
  nvj::Device device("journal", std::make_unique<nvj::MemoryStore>(1 << 20), nvj::Durability::on_acknowledge,
                     nvj::make_model(nvj::ModelSpec::parse("nvram"), 1 << 20));
  CHECK(device.traits() == of("nvram"));
  CHECK_THAT(device.describe(), Catch::EndsWith("; to the host: non-rotational, write-through, no trim, no zero, "
                                                "sectors 512/512"));
}

TEST_CASE("overrides: what is given replaces the model's, the rest stays", "[traits]") {
  nvj::TraitOverrides o;
  CHECK(o.applied_to(of("hdd")) == of("hdd"));
  o.rotational = false;
  o.write_back = false;
  nvj::parse_sector_sizes("4096", o);
  CHECK(o.applied_to(of("hdd")) == DeviceTraits{false, false, false, false, 4096, 4096});
  nvj::parse_sector_sizes("512/4K", o);
  CHECK(*o.logical_sector == 512);
  CHECK(*o.physical_sector == 4096);
  CHECK(nvj::check_traits(o.applied_to(of("hdd")), 1000 * 512).empty());
  nvj::parse_sector_sizes("4096", o);
  CHECK(nvj::check_traits(o.applied_to(of("hdd")), 1002 * 512) ==
        "the export's size, 501 KiB, is not a whole number of 4096-byte logical sectors");

  CHECK(nvj::parse_yes_no("yes"));
  CHECK_FALSE(nvj::parse_yes_no("no"));
  CHECK_THROWS_WITH(nvj::parse_yes_no("on"), "expected yes or no");
  CHECK(nvj::parse_write_cache("write-back"));
  CHECK_FALSE(nvj::parse_write_cache("write-through"));
  CHECK_THROWS_WITH(nvj::parse_write_cache("writeback"), "expected write-back or write-through");
}

TEST_CASE("the parameters: each names itself and what is wrong", "[traits][config]") {
  CHECK(config_error("data-rotational", "maybe") == "data-rotational=maybe: expected yes or no");
  CHECK(config_error("journal-write-cache", "on") ==
        "journal-write-cache=on: expected write-back or write-through");
  CHECK(config_error("data-trim", "1") == "data-trim=1: expected yes or no");
  CHECK(config_error("journal-zero", "") == "journal-zero=: expected yes or no");
  CHECK(config_error("data-sector-size", "1000") ==
        "data-sector-size=1000: the logical sector size 1000 is not a power of two");
  CHECK(config_error("data-sector-size", "256") ==
        "data-sector-size=256: the logical sector size 256 is not within 512 to 4096 bytes");
  CHECK(config_error("data-sector-size", "512/128K") ==
        "data-sector-size=512/128K: the physical sector size 128K is not within 512 to 65536 bytes");
  CHECK(config_error("data-sector-size", "4096/512") ==
        "data-sector-size=4096/512: the physical sector size 512 is smaller than the logical one, 4096");
  CHECK_THAT(config_error("data-sector-size", "x"), Catch::StartsWith("data-sector-size=x: the logical sector size: "));
  CHECK_THAT(config_error("data-rotationl", "yes"), Catch::Contains("unknown parameter 'data-rotationl'"));
  CHECK(config_error("data-sector-size", "512/4096") == "accepted");

  nvj::ConfigParser parser;
  parser.set("journal-write-cache", "write-back");
  parser.set("data-sector-size", "4096");
  parser.set("journal-rotational", "yes");
  const nvj::LabConfig config = parser.finish();
  CHECK(*config.journal.traits.write_back);
  CHECK(*config.journal.traits.rotational);
  CHECK_FALSE(config.data.traits.rotational);
  CHECK(*config.data.traits.logical_sector == 4096);
  CHECK(config.fs.sector_size == 4096);  // the new ext4's blocks at least that
  CHECK(config.data.sector_param == "data-sector-size=4096");

  nvj::ConfigParser internal;
  internal.set("fs-journal", "internal");
  internal.set("journal-sector-size", "4096");
  CHECK_THROWS_WITH(internal.finish(), "journal-sector-size=4096: there is no journal export with fs-journal=internal");
  nvj::ConfigParser small;
  small.set("data-sector-size", "2048");
  small.set("fs-block-size", "1024");
  CHECK_THROWS_WITH(small.finish(), "fs-block-size=1024: is smaller than the 2048-byte logical sectors of "
                                    "data-sector-size=2048: the kernel would not mount it");
}

TEST_CASE("nvj attach --scheduler: for every export, or one; only Linux's schedulers", "[traits][attach]") {
  using nvj::cli::parse_schedulers;
  const std::vector<std::string> both{"data", "journal"};
  CHECK(parse_schedulers({}, both).empty());
  CHECK(parse_schedulers({"bfq"}, both) == std::map<std::string, std::string>{{"data", "bfq"}, {"journal", "bfq"}});
  CHECK(parse_schedulers({"journal=kyber", "none"}, both) ==
        std::map<std::string, std::string>{{"data", "none"}, {"journal", "kyber"}});
  CHECK_THROWS_WITH(parse_schedulers({"cfq"}, both),
                    "--scheduler cfq: 'cfq' is no I/O scheduler of Linux (none, mq-deadline, bfq or kyber)");
  CHECK_THROWS_WITH(parse_schedulers({"log=none"}, both), "--scheduler log=none: no export 'log' is being attached");
  CHECK(nvj::cli::default_scheduler(true) == "mq-deadline");
  CHECK(nvj::cli::default_scheduler(false) == "none");
}

}  // namespace device_traits_test
