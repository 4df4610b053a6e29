// SPDX-License-Identifier: BSD-3-Clause
// The nvj command's own logic: parsing the kernel's jbd2 counters, the
// patterns that read other programs' text, server addresses and the attach
// undo log.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "tools/nvj/client/server_address.h"
#include "tools/nvj/host/devices/undo_log.h"
#include "tools/nvj/host/files/text_pattern.h"
#include "tools/nvj/host/fs_tools/jbd2_info.h"

namespace nvj_cli_test {

namespace fs = std::filesystem;
using namespace nvj::cli;

TEST_CASE("the kernel's jbd2 info is parsed", "[nvj]") {
  // As fs/jbd2/journal.c jbd2_seq_info_show() prints it (Linux 6.x).
  const std::string text =
      "1176 transactions (1170 requested), each up to 5461 blocks\n"
      "average: \n"
      "  0ms waiting for transaction\n"
      "  0ms request delay\n"
      "  4ms running transaction\n"
      "  0ms transaction was being locked\n"
      "  0ms flushing data (in ordered mode)\n"
      "  0ms logging transaction\n"
      "  961us average transaction commit time\n"
      "  3 handles per transaction\n"
      "  11 blocks per transaction\n"
      "  12 logged blocks per transaction\n";
  const Jbd2Info info = parse_jbd2_info(text);
  CHECK(info.transactions == 1176);
  CHECK(info.requested == 1170);
  CHECK(info.commit_time_us == 961);
  CHECK(info.handles_per_transaction == 3);
  CHECK(info.blocks_per_transaction == 11);
  CHECK(info.logged_blocks_per_transaction == 12);
  CHECK_THROWS_WITH(parse_jbd2_info("nothing here"), "not a jbd2 info file");
}

TEST_CASE("text patterns: groups, every match, lines, replacing, bad patterns", "[nvj]") {
  const TextPattern bytes(R"((\d+) bytes \((\d+)?)");
  const auto m = bytes.search("20971520 bytes (21 MB, 20 MiB) copied");
  REQUIRE(m.has_value());
  CHECK(m->groups == std::vector<std::string>{"20971520 bytes (21", "20971520", "21"});
  CHECK(m->end == 18);
  const auto partial = bytes.search("x 7 bytes (no size");
  REQUIRE(partial.has_value());
  CHECK(partial->groups[2].empty());  // a group that took no part
  CHECK_FALSE(bytes.search("no number here").has_value());

  // ^ and $ at each line only when asked.
  const std::string rows = "a 1\nb 2\nc 3\n";
  const auto every = TextPattern(R"(^([a-z]) (\d)$)", true).search_all(rows);
  REQUIRE(every.size() == 3);
  CHECK(every[2].groups[1] == "c");
  CHECK(every[2].end == 11);
  CHECK(TextPattern(R"(^([a-z]) (\d)$)").search_all(rows).empty());

  // Replaced as written: "$1" is not a back-reference.
  CHECK(TextPattern("\x1b\\[[0-9;?]*[A-Za-z]").replace("\x1b[2Kdone\x1b[0m", "") == "done");
  CHECK(TextPattern("o").replace("foo", "$1") == "f$1$1");

  CHECK_THROWS_WITH(TextPattern("(unclosed"), Catch::StartsWith("not a regular expression: (unclosed"));
  TextPattern source("x+");
  const TextPattern moved(std::move(source));
  CHECK(moved.search("axxb")->groups[0] == "xx");
}

TEST_CASE("server addresses: socket paths and NBD URIs", "[nvj]") {
  const auto sock = ServerAddress::parse("/run/lab.sock");
  CHECK(sock.socket() == "/run/lab.sock");
  CHECK(sock.uri_for("journal") == "nbd+unix:///journal?socket=/run/lab.sock");
  const auto rel = ServerAddress::parse("lab.sock");
  CHECK(rel.socket() == (fs::current_path() / "lab.sock").string());

  const auto unix_uri = ServerAddress::parse("nbd+unix:///data?socket=/s");
  CHECK(unix_uri.socket() == "/s");
  CHECK(unix_uri.uri_for("journal") == "nbd+unix:///journal?socket=/s");
  const auto tcp = ServerAddress::parse("nbd://host:10809/data");
  CHECK(tcp.socket().empty());
  CHECK(tcp.uri_for("journal") == "nbd://host:10809/journal");
  CHECK(ServerAddress::parse("nbd://host").uri_for("data") == "nbd://host/data");

  CHECK_THROWS_WITH(ServerAddress::parse(""), "the server address is empty");
  CHECK_THROWS_WITH(ServerAddress::parse("nbdx://h/"), Catch::Contains("is not an NBD URI"));
}

TEST_CASE("the undo log keeps steps in order and rewrites what is left", "[nvj]") {
  std::string templ = (fs::temp_directory_path() / "nvj-undo-XXXXXX").string();
  REQUIRE(mkdtemp(templ.data()) != nullptr);
  const fs::path dir = templ;
  UndoLog log(dir / "attach.log");
  CHECK_FALSE(log.exists());
  log.append({"dir", {"/run/x/data"}});
  log.append({"fuse", {"/run/x/data", "1234"}});
  log.append({"loop", {"/dev/loop7", "/run/x/data/dev"}});
  auto steps = log.read();
  REQUIRE(steps.size() == 3);
  CHECK(steps[1].kind == "fuse");
  CHECK(steps[1].args == std::vector<std::string>{"/run/x/data", "1234"});
  steps.pop_back();
  log.rewrite(steps);
  CHECK(log.read().size() == 2);
  CHECK_THROWS_WITH(log.append({"dir", {"a\tb"}}), Catch::Contains("contains a tab or newline"));
  log.rewrite({});
  CHECK_FALSE(log.exists());
  fs::remove_all(dir);
}

}  // namespace nvj_cli_test
