// SPDX-License-Identifier: BSD-3-Clause
// Every bad parameter is refused at start-up by the real nbdkit with one
// clear error line naming the parameter, and no file already there changes.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "server_fixture.h"
#include "tools/nvj/host/files/text_file.h"
#include "tools/nvj/host/files/text_pattern.h"
#include "tools/nvj/host/processes/process.h"
#include "tools/nvj/host/processes/server_process.h"

namespace bad_parameters_test {

namespace fs = std::filesystem;
using nvj::test::TempDir;

namespace {

// nbdkit with these parameters; if they were accepted, --run ends it at once.
// The socket goes in a folder of ours: nbdkit 1.32 leaves the folder it makes
// for `-U -` behind when it exits on a configuration error.
nvj::cli::RunResult start(const std::vector<std::string>& params) {
  const TempDir sock;
  std::vector<std::string> argv{"nbdkit", "-U", sock.file("nbdkit.sock"), "--run", "true",
                                nvj::cli::ServerProcess::default_plugin()};
  argv.insert(argv.end(), params.begin(), params.end());
  return nvj::cli::run(argv, nvj::test::server_env(), std::chrono::seconds(30));
}

std::vector<std::string> error_lines(const std::string& output) {
  std::vector<std::string> lines;
  std::istringstream in(output);
  std::string line;
  while (std::getline(in, line))
    if (line.find("error:") != std::string::npos) lines.push_back(line);
  return lines;
}

void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

struct Case {
  const char* what;
  std::vector<std::string> params;
  std::string expect;  // regex the one error line must match
};

}  // namespace

TEST_CASE("bad parameters are refused at start-up with one line naming the parameter", "[parameters]") {
  TempDir dir;
  const std::string existing = dir.file("existing.img");
  std::string stored(2 << 20, '\0');
  for (std::size_t i = 0; i < stored.size(); i += 4096) stored[i] = 'S';
  write_file(existing, stored);
  write_file(dir.file("odd.img"), std::string(1000, 'o'));
  write_file(dir.file("small-journal.img"), std::string(100 << 10, 'j'));
  fs::create_directories(dir.path / "big-tree");
  write_file(dir.file("big-tree/big"), std::string(20 << 20, 'x'));
  const std::string locked = dir.file("locked.img");
  write_file(locked, std::string(1 << 20, 'L'));

  const std::vector<Case> cases{
      {"unknown key", {"size=1G"}, R"(size=1G: unknown parameter 'size')"},
      {"bad size", {"data=12Q"}, R"(data=12Q: '12Q' is not a size \(unknown suffix 'Q')"},
      {"fractional size", {"journal=1.5G"}, R"(journal=1.5G: '1.5G' is not a size)"},
      {"negative size", {"data=-1G"}, R"(data=-1G: .*negative)"},
      {"data size 0", {"data=0"}, R"(data=0: the size must not be zero)"},
      {"journal size 0", {"journal=0"}, R"(journal=0: the size must not be zero)"},
      {"size not in sectors", {"data=1000"}, R"(data=1000: the size must be a multiple of 512 bytes)"},
      {"journal too small", {"journal=512K"}, R"(journal=512K: a journal must be at least 1 MiB)"},
      {"journal bigger than allowed", {"journal=64G"}, R"(journal=64G: a journal may be at most 40000 MiB)"},
      {"memory bigger than allowed", {"data=1P"}, R"(data=1P: a sparse memory export may be at most 256 TiB)"},
      {"duplicate key", {"data=1G", "data=2G"}, R"(data=2G: 'data' is given twice)"},
      {"magic key and data=", {"1G", "data=2G"}, R"(data=2G: 'data' is given twice)"},
      {"empty path", {"data-file="}, R"(data-file=: the path is empty)"},
      {"file that is a directory", {"data-file=" + dir.path.string()},
       "data-file=" + dir.path.string() + ": is a directory, not a file"},
      // A read-only sysfs attribute: even root cannot open it for writing.
      {"file that cannot be opened for writing", {"journal-file=/sys/kernel/uevent_seqnum"},
       R"(journal-file=/sys/kernel/uevent_seqnum: cannot open for reading and writing: Permission denied)"},
      {"file that is a device", {"data-file=/dev/null"}, R"(data-file=/dev/null: is not a regular file)"},
      {"file in a missing folder", {"data-file=" + dir.file("no/such.img")},
       "data-file=" + dir.file("no/such.img") + ": cannot create: No such file or directory"},
      {"same file twice", {"data-file=" + existing, "journal-file=" + existing},
       "journal-file=" + existing + ": is the same file as data-file"},
      {"file larger than the size asked for", {"data-file=" + existing, "data=1M"},
       "data-file=" + existing + ": holds 2 MiB, more than the 1 MiB asked for; it is never truncated"},
      {"file not in sectors", {"data-file=" + dir.file("odd.img")},
       "data-file=" + dir.file("odd.img") + ": holds 1000 bytes, not a multiple of 512"},
      {"journal file too small", {"journal-file=" + dir.file("small-journal.img")},
       "journal-file=" + dir.file("small-journal.img") + ": holds 100 KiB: a journal must be at least 1 MiB"},
      {"unknown model", {"data-model=tape"}, R"(data-model=tape: unknown model 'tape' \(none, nvram, ssd or hdd\))"},
      {"unknown model key", {"journal-model=nvram:latency=2us,speed=9"},
       R"(journal-model=nvram:latency=2us,speed=9: unknown nvram parameter 'speed' \(it takes )"},
      {"bad model value", {"data-model=hdd:rpm=fast"},
       R"(data-model=hdd:rpm=fast: hdd rpm=fast: expected a whole number from 1000 to 30000)"},
      {"malformed model", {"data-model=hdd:rpm"}, R"(data-model=hdd:rpm: 'rpm' is not KEY=VALUE)"},
      {"platter smaller than the export", {"data=2G", "data-model=hdd:capacity=1G"},
       R"(data-model=hdd:capacity=1G: hdd: capacity=1 GiB is smaller than the export \(2 GiB\))"},
      {"unknown filesystem", {"fs=ext3"}, R"(fs=ext3: expected ext4 or none)"},
      {"unknown journal placement", {"fs-journal=inside"}, R"(fs-journal=inside: expected external, internal, internal:SIZE or none)"},
      {"bad internal journal size", {"fs-journal=internal:12Q"}, R"(fs-journal=internal:12Q: '12Q' is not a size)"},
      {"internal journal larger than the filesystem takes", {"data=64M", "fs-journal=internal:40M"},
       R"(fs-journal=internal:40 MiB: a journal of 40960 blocks: a filesystem of 65536 blocks takes 1024 to [0-9]+ \(half its free blocks\))"},
      {"filesystem options with fs=none", {"fs=none", "fs-journal=internal"},
       R"(fs-journal=internal: formats the filesystem, but fs=none serves blank disks)"},
      {"journal export size with an internal journal", {"fs-journal=internal", "journal=64M"},
       R"(journal=64M: there is no journal export with fs-journal=internal \(size the internal journal)"},
      {"journal on the data disk without an internal journal", {"journal-model=data"},
       R"(journal-model=data: puts an internal journal on the data disk's model: it needs fs-journal=internal)"},
      {"populate from a missing directory", {"fs-populate=" + dir.file("no-tree")},
       "fs-populate=" + dir.file("no-tree") + ": is not a directory"},
      {"bad block size", {"fs-block-size=512"}, R"(fs-block-size=512: expected 1024, 2048 or 4096)"},
      {"unknown format mode", {"fs-format=always"}, R"(fs-format=always: expected auto or force)"},
      {"journal-trace neither on nor off", {"journal-trace=yes"}, R"(journal-trace=yes: expected on or off)"},
      {"empty trace file", {"trace-file="}, R"(trace-file=: the path is empty)"},
      {"recording over a file", {"record=" + existing},
       "record=" + existing + ": the file exists: a recording never overwrites a file"},
      {"recording in a missing folder", {"record=" + dir.file("no/run.nvjrec")},
       "record=" + dir.file("no/run.nvjrec") + ": cannot create " + dir.file("no/run.nvjrec") +
           ": No such file or directory"},
      {"bad recording buffer", {"record-buffer=12Q"}, R"(record-buffer=12Q: '12Q' is not a size)"},
      {"recording buffer too small", {"record-buffer=512K"}, R"(record-buffer=512K: must be at least 1 MiB)"},
      {"trace file without tracing", {"journal-trace=off", "trace-file=" + dir.file("t.json")},
       "trace-file=" + dir.file("t.json") + ": traces the journal, but journal-trace=off"},
      {"trace file without a journal", {"fs-journal=none", "trace-file=" + dir.file("t.json")},
       "trace-file=" + dir.file("t.json") + ": there is no journal to trace with fs-journal=none"},
      {"trace file in a missing folder", {"trace-file=" + dir.file("no/t.json")},
       "trace-file=" + dir.file("no/t.json") + ": cannot open it: No such file or directory"},
      {"label too long", {"fs-label=seventeen-letters"}, R"(fs-label=seventeen-letters: a label has at most 16 bytes)"},
      {"a tree that does not fit", {"data=16M", "fs-populate=" + dir.file("big-tree")},
       "fs-populate=" + dir.file("big-tree") + ": the tree does not fit in 16 MiB: " + dir.file("big-tree/big") +
       ": needs 20480 more blocks, [0-9]+ are free"},
      {"a file holding data that is not ext4", {"data-file=" + existing},
       "data-file=" + existing + ": holds data that is not an ext4 filesystem; it is not formatted over "
       "\\(fs-format=force formats it anyway"},
      {"file in use by another server", {"data-file=" + locked},
       "data-file=" + locked + ": is in use by another export or server \\(locked\\)"},
  };
  REQUIRE(cases.size() >= 10);

  // Another holder of the lock, as a second server would be.
  const int holder = ::open(locked.c_str(), O_RDONLY | O_CLOEXEC);
  REQUIRE(holder >= 0);
  REQUIRE(::flock(holder, LOCK_EX) == 0);

  for (const auto& c : cases) {
    SECTION(c.what) {
      const auto before = nvj::cli::read_text_file(existing);
      const auto r = start(c.params);
      INFO("nbdkit said: " << r.output);
      CHECK(r.status != 0);
      const auto lines = error_lines(r.output);
      REQUIRE(lines.size() == 1);
      CHECK(nvj::cli::TextPattern(c.expect).search(lines[0]).has_value());
      CHECK(nvj::cli::read_text_file(existing) == before);
    }
  }
  ::close(holder);
  CHECK(nvj::cli::read_text_file(dir.file("odd.img")) == std::string(1000, 'o'));
  CHECK(nvj::cli::read_text_file(locked) == std::string(1 << 20, 'L'));
  CHECK_FALSE(fs::exists(dir.file("no")));
}

TEST_CASE("good parameters start the server; --dump-plugin names the thread model", "[parameters]") {
  TempDir dir;
  const auto ok = start({"2G", "journal=128M", "data-file=" + dir.file("d.img"), "journal-file=" + dir.file("j.img")});
  INFO(ok.output);
  CHECK(ok.status == 0);
  CHECK(fs::file_size(dir.file("d.img")) == 2ull << 30);
  CHECK(fs::file_size(dir.file("j.img")) == 128ull << 20);

  // (What --help lists is compared with the parser and the manual in
  // parameter_docs_test.cpp.)
  const auto dump =
      nvj::cli::run({"nbdkit", nvj::cli::ServerProcess::default_plugin(), "--dump-plugin"}, nvj::test::server_env());
  CHECK(dump.status == 0);
  CHECK_THAT(dump.output, Catch::Contains("thread_model=parallel"));
  CHECK_THAT(dump.output, Catch::Contains("nvjournal_version="));
}

}  // namespace bad_parameters_test
