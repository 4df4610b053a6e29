// SPDX-License-Identifier: BSD-3-Clause
// The oracle's facts from the real workloads (nvj writers, nvj synctest)
// and over a serial line through nvj vm's relay into a real nbdkit's
// recording: each fact is a mark, in the order the
// workload made it durable, and the last fact about each file that is left
// matches the file on disk (size and CRC-32C computed here from its bytes).
// The files live in a plain folder: what is checked is the facts, not the
// exports.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>

#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "common/control_client.h"
#include "common/mark_client.h"
#include "fscore/crc32c.h"
#include "crashlab/facts/fact.h"
#include "fscore/record/frame_reader.h"
#include "server_fixture.h"
#include "tests/support/file_bytes.h"
#include "tools/nvj/host/processes/process.h"
#include "tools/nvj/vm/fact_relay.h"

namespace facts_test {

using crashlab::Fact;
using crashlab::FactKind;
using fscore::record::FrameKind;
using fscore::record::FrameReader;
using nvj::test::control_json;
using nvj::test::file_bytes;
using nvj::test::start_server;
using nvj::test::TempDir;

namespace {

// The facts among a recording's marks, in order; every mark that starts
// with "fact " must parse.
std::vector<Fact> recorded_facts(const std::string& path) {
  const auto bytes = file_bytes(path);
  FrameReader r(bytes);
  std::vector<Fact> facts;
  while (auto f = r.next())
    if (f->kind == FrameKind::mark)
      if (auto fact = crashlab::parse_fact(f->text)) facts.push_back(*fact);
  return facts;
}

std::uint32_t crc_of_file(const std::filesystem::path& p) {
  const auto bytes = file_bytes(p.string());
  return ~fscore::crc32c(~0u, bytes.data(), bytes.size());
}

// Facts about `path`, as "kind" or "kind size" strings.
std::vector<std::string> story(const std::vector<Fact>& facts, const std::string& path) {
  std::vector<std::string> out;
  for (const Fact& f : facts) {
    if (f.kind == FactKind::entry && f.path + "/" + f.second == path) out.push_back("entry");
    if (f.path != path && !(f.kind == FactKind::rename && f.second == path)) continue;
    if (f.kind == FactKind::file) out.push_back("file " + std::to_string(f.size));
    if (f.kind == FactKind::prefix) out.push_back("prefix " + std::to_string(f.size));
    if (f.kind == FactKind::rename) out.push_back(f.path == path ? "renamed away" : "renamed here");
    if (f.kind == FactKind::rewrite) out.push_back("rewrite");
    if (f.kind == FactKind::remove) out.push_back("remove");
  }
  return out;
}

// A server recording from the start, and a folder standing for the
// filesystem's root. facts() stops the recording and reads its facts.
struct FactLab {
  TempDir dir;
  std::string control = dir.file("control.sock");
  std::string recording = dir.file("facts.nvjrec");
  std::unique_ptr<nvj::cli::ServerProcess> server =
      start_server(dir.path / "run", {"data=64M", "control=" + control, "record=" + recording});
  std::filesystem::path root = dir.path / "fs";

  FactLab() { std::filesystem::create_directories(root); }
  std::vector<Fact> facts() {
    control_json(control, "POST", "/record/stop");
    return recorded_facts(recording);
  }
  // The labels of the marks the server has taken so far (GET /stats).
  std::vector<std::string> marks() const {
    const auto stats = control_json(control, "GET", "/stats");  // kept: the loop walks inside it
    std::vector<std::string> out;
    for (const auto& m : stats.at("marks")) out.push_back(m.at("label"));
    return out;
  }
};

}  // namespace

TEST_CASE("nvj writers posts a prefix fact after every fsync, a file fact after the last, and a rewrite before each later round", "[facts]") {
  FactLab lab;
  const std::string& control = lab.control;
  const auto& root = lab.root;
  auto r = nvj::cli::run({NVJ_BINARY, "writers", (root / "w").string(), "--tasks", "3", "--chunks", "4",
                          "--chunk-size", "4K", "--dirs", "2", "--rounds", "2", "--fsync", "each", "--control",
                          control, "--fact-root", root.string()});
  INFO(r.output);
  REQUIRE(r.status == 0);
  // A script's own facts through nvj mark; a malformed one is refused and not posted.
  r = nvj::cli::run({NVJ_BINARY, "mark", "--control", control, "fact", "entry", "w", "d0"});
  CHECK(r.status == 0);
  r = nvj::cli::run({NVJ_BINARY, "mark", "--control", control, "fact", "remove", "/w/d0/t0"});
  CHECK(r.status == 2);
  CHECK_THAT(r.output, Catch::Contains("nvj mark: fact: an absolute path"));
  // The server's refusal reaches the poster with its status and reason.
  try {
    nvj::post_mark(control, std::string(2000, 'x'));
    FAIL("a 2000-byte label was taken");
  } catch (const nvj::MarkError& e) {
    CHECK_THAT(e.what(), Catch::Contains("control socket " + control + ": POST /mark answered 400: "));
    CHECK(e.error() == 0);
  }
  const std::vector<Fact> facts = lab.facts();
  REQUIRE(facts.size() == 3 * (2 * 4 + 1) + 1);
  CHECK(facts.back() == Fact{FactKind::entry, "w", "d0", 0, 0});
  for (const std::string task : {"w/d0/t0", "w/d1/t1", "w/d0/t2"}) {
    CAPTURE(task);
    CHECK(story(facts, task) == std::vector<std::string>{"prefix 4096", "prefix 8192", "prefix 12288",
                                                         "file 16384", "rewrite", "prefix 4096", "prefix 8192",
                                                         "prefix 12288", "file 16384"});
    // The last fact is what the file holds.
    const Fact* last = nullptr;
    for (const Fact& f : facts)
      if (f.kind == FactKind::file && f.path == task) last = &f;
    REQUIRE(last != nullptr);
    CHECK(last->size == std::filesystem::file_size(root / task));
    CHECK(last->crc32c == crc_of_file(root / task));
  }
  CHECK(lab.server->stop() == 0);
}

TEST_CASE("nvj synctest posts file, entry, rename and remove facts, with its root from NVJ_MNT", "[facts]") {
  FactLab lab;
  const std::string& control = lab.control;
  const auto& root = lab.root;
  auto r = nvj::cli::run({NVJ_BINARY, "synctest", (root / "mta").string(), "--processes", "2", "--passes", "3",
                          "--unlink-lag", "1", "--fsync-file", "--fsync-dir", "--min-size", "1K", "--max-size", "8K",
                          "--mean-size", "2K"},
                         {"NVJ_CONTROL=" + control, "NVJ_MNT=" + root.string()});
  INFO(r.output);
  REQUIRE(r.status == 0);
  const std::vector<Fact> facts = lab.facts();
  // Per file: its content once fsynced, its entry once the directory is, each
  // of 3 renames before it happens and its new entry after; unlinked a pass later.
  CHECK(story(facts, "mta/d0/p0-0").size() == 3);  // file, entry, renamed away
  CHECK(story(facts, "mta/d0/p0-0.r3") == std::vector<std::string>{"renamed here", "entry", "remove"});
  CHECK(story(facts, "mta/d1/p1-2.r1") == std::vector<std::string>{"renamed here", "entry", "renamed away"});
  for (const std::string file : {"mta/d0/p0-2", "mta/d1/p1-2"}) {
    CAPTURE(file);
    const auto s = story(facts, file);
    REQUIRE(s.size() == 3);
    CHECK(s[1] == "entry");
    CHECK(s[2] == "renamed away");
    // Its content fact matches what is left, under its last name.
    const auto left = root / (file + ".r3");
    REQUIRE(std::filesystem::exists(left));
    CHECK(s[0] == "file " + std::to_string(std::filesystem::file_size(left)));
    for (const Fact& f : facts)
      if (f.kind == FactKind::file && f.path == file) CHECK(f.crc32c == crc_of_file(left));
  }
  CHECK(lab.server->stop() == 0);
}

TEST_CASE("a workload whose facts cannot be posted fails, naming why", "[facts]") {
  TempDir dir;
  // No server at the socket: the task that tried fails, naming the socket.
  auto r = nvj::cli::run({NVJ_BINARY, "writers", dir.file("w"), "--tasks", "1", "--chunks", "1", "--dirs", "1",
                          "--fsync", "end", "--control", dir.file("none.sock"), "--fact-root", dir.path.string()});
  CHECK(r.status == 1);
  CHECK_THAT(r.output, Catch::Contains("post fact file d0/t0") && Catch::Contains("none.sock") &&
                           Catch::Contains("no such file or directory (is a server running with control="));
  // A tree outside the root cannot be named by facts: refused before anything runs.
  std::filesystem::create_directories(dir.path / "root");
  r = nvj::cli::run({NVJ_BINARY, "synctest", dir.file("elsewhere"), "--processes", "1", "--passes", "1",
                     "--control", dir.file("none.sock"), "--fact-root", dir.file("root")});
  CHECK(r.status == 2);
  CHECK_THAT(r.output, Catch::Contains("is not under the filesystem's root"));
  CHECK_FALSE(std::filesystem::exists(dir.path / "elsewhere" / "d0" / "p0-0"));
  r = nvj::cli::run({NVJ_BINARY, "writers", dir.file("w2"), "--control", dir.file("none.sock"), "--fact-root",
                     dir.file("no-such-root")});
  CHECK(r.status == 2);
  CHECK_THAT(r.output, Catch::Contains("is not a folder"));
}

namespace {

// QEMU's part: the bytes between the guest's serial line (a pty's master
// stands for it) and the host's Unix socket, both ways, until stopped.
class SerialPump {
 public:
  SerialPump(int master, int line) : master_(master), line_(line), thread_([this] { run(); }) {}
  ~SerialPump() {
    stop_ = true;
    thread_.join();
  }
  SerialPump(const SerialPump&) = delete;
  SerialPump& operator=(const SerialPump&) = delete;
  std::string from_guest() {
    std::lock_guard lock(mutex_);
    return from_guest_;
  }

 private:
  void run() {
    char buf[512];
    while (!stop_) {
      pollfd p[2] = {{master_, POLLIN, 0}, {line_, POLLIN, 0}};
      if (::poll(p, 2, 20) <= 0) continue;
      if (p[0].revents & POLLIN) {
        const ssize_t n = ::read(master_, buf, sizeof buf);
        if (n > 0) {
          {
            std::lock_guard lock(mutex_);
            from_guest_.append(buf, static_cast<std::size_t>(n));
          }
          if (::write(line_, buf, static_cast<std::size_t>(n)) != n) return;
        }
      }
      if (p[1].revents & POLLIN) {
        const ssize_t n = ::read(line_, buf, sizeof buf);
        if (n <= 0) return;
        if (::write(master_, buf, static_cast<std::size_t>(n)) != n) return;
      }
    }
  }

  int master_, line_;
  std::atomic<bool> stop_{false};
  std::mutex mutex_;
  std::string from_guest_;
  std::thread thread_;
};

// The guest's serial line and QEMU's socket for it: a pty, whose slave
// stands for the guest's /dev/ttyS1, and a listening Unix socket that the
// relay connects to (accept() once it is started). Closes what is open.
struct SerialLine {
  explicit SerialLine(std::string socket_path) : socket(std::move(socket_path)) {
    master = ::posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
    REQUIRE(master >= 0);
    REQUIRE(::grantpt(master) == 0);
    REQUIRE(::unlockpt(master) == 0);
    slave = ::ptsname(master);
    listener = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    std::strncpy(address.sun_path, socket.c_str(), sizeof address.sun_path - 1);
    REQUIRE(::bind(listener, reinterpret_cast<const sockaddr*>(&address), sizeof address) == 0);
    REQUIRE(::listen(listener, 1) == 0);
  }
  ~SerialLine() {
    close_host();
    if (master >= 0) ::close(master);
  }
  SerialLine(const SerialLine&) = delete;
  SerialLine& operator=(const SerialLine&) = delete;
  void accept() {
    line = ::accept(listener, nullptr, nullptr);
    REQUIRE(line >= 0);
  }
  // QEMU has gone: the relay sees the line close.
  void close_host() {
    for (int* fd : {&line, &listener})
      if (*fd >= 0) {
        ::close(*fd);
        *fd = -1;
      }
  }
  std::string socket, slave;
  int master = -1, listener = -1, line = -1;
};

}  // namespace

TEST_CASE("marks written to a serial line reach the server through the host's relay before post_mark returns", "[facts]") {
  FactLab lab;
  // The guest's side: post_mark writes the line raw and waits for the
  // relay's answer. The host's side: the relay posts the marks, answers
  // each, drops other lines, and ends when the line closes.
  SerialLine serial(lab.dir.file("serial.sock"));
  const std::string& slave = serial.slave;
  nvj::cli::FactRelay relay(serial.socket, lab.control);
  serial.accept();
  const std::string noise = "[    1.234] boot noise\r\n";
  REQUIRE(::write(serial.line, noise.data(), noise.size()) == static_cast<ssize_t>(noise.size()));
  {
    SerialPump pump(serial.master, serial.line);
    nvj::post_mark(slave, "fact entry . first");
    CHECK(lab.marks() == std::vector<std::string>{"fact entry . first"});  // returned: the server has it already
    nvj::post_mark(slave, "fact file my%20mail size 3 crc32c 0badf00d");
    CHECK(lab.marks().size() == 2);
    CHECK(pump.from_guest() ==
          "nvj-mark fact%20entry%20.%20first\nnvj-mark fact%20file%20my%2520mail%20size%203%20crc32c%200badf00d\n");
  }
  serial.close_host();
  relay.finish();
  CHECK(relay.relayed() == 2);
  CHECK(relay.ignored() == 1);
  CHECK(relay.error().empty());

  // Nobody answers (no relay on the line): post_mark gives up, saying so.
  try {
    nvj::post_mark(slave, "fact entry . second", std::chrono::milliseconds(300));
    FAIL("post_mark returned without an answer");
  } catch (const nvj::MarkError& e) {
    CHECK_THAT(e.what(), Catch::Contains("no answer from the host in 300 ms"));
  }
  const std::vector<Fact> facts = lab.facts();
  REQUIRE(facts.size() == 2);
  CHECK(facts[0] == Fact{FactKind::entry, ".", "first", 0, 0});
  CHECK(facts[1] == Fact{FactKind::file, "my mail", "", 3, 0x0badf00d});
  CHECK(lab.server->stop() == 0);
}

TEST_CASE("a mark the server does not take is refused back to the guest, naming why", "[facts]") {
  TempDir dir;
  SerialLine serial(dir.file("serial.sock"));
  nvj::cli::FactRelay relay(serial.socket, dir.file("no-server.ctl"));
  serial.accept();
  {
    SerialPump pump(serial.master, serial.line);
    try {
      nvj::post_mark(serial.slave, "fact entry . lost");
      FAIL("post_mark returned though the server never had the mark");
    } catch (const nvj::MarkError& e) {
      CHECK_THAT(e.what(), Catch::Contains("the host did not post it") && Catch::Contains("no-server.ctl"));
    }
  }
  serial.close_host();
  relay.finish();
  CHECK(relay.relayed() == 0);
  CHECK_THAT(relay.error(), Catch::Contains("no-server.ctl"));
}

}  // namespace facts_test
