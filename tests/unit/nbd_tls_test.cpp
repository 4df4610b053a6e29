// SPDX-License-Identifier: BSD-3-Clause
// TLS-PSK on the client side: the PSK file as nbdkit and psktool write it,
// the identity picked from it, the URI libnbd and nbdfuse are given, the
// errors for a key that does not fit the address, and QEMU's arguments.
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "tools/nvj/client/server_address.h"
#include "tools/nvj/client/tls_psk.h"
#include "tools/nvj/host/files/text_file.h"
#include "tools/nvj/host/processes/process.h"
#include "tools/nvj/vm/qemu.h"

namespace nbd_tls_test {

namespace fs = std::filesystem;
using namespace nvj::cli;

namespace {

const std::string kKeyA(64, 'a');
const std::string kKeyB = "00112233445566778899AABBCCDDEEFF00112233445566778899aabbccddeeff";

struct TempDir {
  fs::path path;
  TempDir() {
    std::string t = (fs::temp_directory_path() / "nvj-tls-XXXXXX").string();
    REQUIRE(::mkdtemp(t.data()) != nullptr);
    path = t;
  }
  ~TempDir() { fs::remove_all(path); }
  fs::path file(const std::string& name, const std::string& text) const {
    std::ofstream(path / name, std::ios::binary) << text;
    return path / name;
  }
};

}  // namespace

TEST_CASE("PSK files: USERNAME:HEXKEY lines, the identity used", "[tls]") {
  TempDir tmp;
  const auto two = tmp.file("two.psk", "alice:" + kKeyA + "\n\nbob:" + kKeyB + "\r\n");
  const auto ids = read_psk_file(two);
  REQUIRE(ids.size() == 2);
  CHECK(ids[0].username == "alice");
  CHECK(ids[0].key_hex == kKeyA);
  CHECK(ids[1].username == "bob");
  CHECK(ids[1].key_hex == kKeyB);

  CHECK(pick_psk_identity(ids, "bob", two).key_hex == kKeyB);
  CHECK_THROWS_WITH(pick_psk_identity(ids, "", two),
                    Catch::Contains("holds several identities ('alice', 'bob'): choose one with --tls-username"));
  CHECK_THROWS_WITH(pick_psk_identity(ids, "carol", two),
                    Catch::Contains("has no identity 'carol' (it has 'alice', 'bob')"));
  const auto one = tmp.file("one.psk", "alice:" + kKeyA + "\n");
  CHECK(pick_psk_identity(read_psk_file(one), "", one).username == "alice");

  CHECK_THROWS_WITH(read_psk_file(tmp.path / "none.psk"),
                    Catch::Contains("cannot read the PSK file " + (tmp.path / "none.psk").string()));
  CHECK_THROWS_WITH(read_psk_file(tmp.file("empty.psk", "\n")), Catch::Contains("holds no USERNAME:HEXKEY line"));
  for (const std::string& bad :
       std::vector<std::string>{"alice", ":" + kKeyA, "alice:", "alice:abc", "alice:" + std::string(64, 'g')})
    CHECK_THROWS_WITH(read_psk_file(tmp.file("bad.psk", "bob:" + kKeyB + "\n" + bad + "\n")),
                      Catch::Contains("bad.psk, line 2: expected USERNAME:HEXKEY"));
}

TEST_CASE("PSK files: a copy of one identity, mode 0600, never over a file", "[tls]") {
  TempDir tmp;
  const fs::path copy = tmp.path / "keys.psk";
  write_psk_file(copy, {"alice", kKeyA});
  CHECK(read_text_file(copy) == "alice:" + kKeyA + "\n");
  struct stat st {};
  REQUIRE(::stat(copy.c_str(), &st) == 0);
  CHECK((st.st_mode & 07777) == 0600);
  CHECK_THROWS_WITH(write_psk_file(copy, {"bob", kKeyB}), Catch::Contains("cannot create " + copy.string()));
  CHECK(read_text_file(copy) == "alice:" + kKeyA + "\n");
}

TEST_CASE("server addresses over TCP and TLS: the URI libnbd and nbdfuse get", "[tls]") {
  TempDir tmp;
  const auto one = tmp.file("one key.psk", "alice:" + kKeyA + "\n").string();
  const auto two = tmp.file("two.psk", "alice:" + kKeyA + "\nbob:" + kKeyB + "\n").string();
  const std::string encoded = (tmp.path / "one%20key.psk").string();

  // Plain TCP: as written, no key.
  const auto tcp = ServerAddress::parse("nbd://127.0.0.1:10810/data");
  CHECK_FALSE(tcp.tls());
  CHECK(tcp.host() == "127.0.0.1");
  CHECK(tcp.port() == "10810");
  CHECK(tcp.export_name() == "data");
  CHECK(tcp.uri_for("journal") == "nbd://127.0.0.1:10810/journal");
  // Without TLS a user in the URI is no identity: it stays as written.
  const auto user = ServerAddress::parse("nbd://carol@h:10810/");
  CHECK(user.host() == "h");
  CHECK(user.uri_for("data") == "nbd://carol@h:10810/data");

  // nbds with --tls-psk: the file's only identity as the user, the key as tls-psk-file=.
  const auto tls = ServerAddress::parse("nbds://127.0.0.1:10810/data", {one, ""});
  CHECK(tls.tls());
  CHECK(tls.psk_file() == one);
  CHECK(tls.psk_identity().username == "alice");
  CHECK(tls.psk_identity().key_hex == kKeyA);
  CHECK(tls.uri_for("journal") == "nbds://alice@127.0.0.1:10810/journal?tls-psk-file=" + encoded);
  // The same from the URI's own query; the user from the URI or tls-username=.
  CHECK(ServerAddress::parse("nbds://127.0.0.1:10810/?tls-psk-file=" + encoded).uri_for("data") ==
        "nbds://alice@127.0.0.1:10810/data?tls-psk-file=" + encoded);
  CHECK(ServerAddress::parse("nbds://bob@h/?tls-psk-file=" + two).psk_identity().key_hex == kKeyB);
  CHECK(ServerAddress::parse("nbds://h/?tls-username=bob&tls-psk-file=" + two).psk_identity().key_hex == kKeyB);
  CHECK(ServerAddress::parse("nbds://h", {two, "bob"}).uri_for("data") == "nbds://bob@h/data?tls-psk-file=" + two);
  // Over a Unix socket, and an IPv6 address.
  CHECK(ServerAddress::parse("nbds+unix:///data?socket=/s", {one, ""}).uri_for("journal") ==
        "nbds+unix://alice@/journal?socket=/s&tls-psk-file=" + encoded);
  const auto v6 = ServerAddress::parse("nbds://[::1]:10811/data", {one, ""});
  CHECK(v6.host() == "::1");
  CHECK(v6.port() == "10811");
  CHECK(v6.uri_for("data") == "nbds://alice@[::1]:10811/data?tls-psk-file=" + encoded);
  // Certificates instead of a key: left to libnbd.
  const auto certs = ServerAddress::parse("nbds://h/?tls-certificates=/etc/pki/lab");
  CHECK(certs.psk_file().empty());
  CHECK(certs.uri_for("data") == "nbds://h/data?tls-certificates=/etc/pki/lab");

  // nbdkit's nbd plugin in front of it (nvj attach's TLS through nbdfuse).
  CHECK(tls.nbd_plugin_params("journal") ==
        std::vector<std::string>{"hostname=127.0.0.1", "port=10810", "export=journal", "tls=require",
                                 "tls-psk=" + one, "tls-username=alice"});
  CHECK(ServerAddress::parse("nbds+unix:///?socket=/s", {two, "bob"}).nbd_plugin_params("data") ==
        std::vector<std::string>{"socket=/s", "export=data", "tls=require", "tls-psk=" + two, "tls-username=bob"});
  CHECK(certs.nbd_plugin_params("data") ==
        std::vector<std::string>{"hostname=h", "export=data", "tls=require", "tls-certificates=/etc/pki/lab"});
  CHECK(ServerAddress::parse("nbd://h").nbd_plugin_params("data") ==
        std::vector<std::string>{"hostname=h", "export=data"});

  // What does not fit is named.
  CHECK_THROWS_AS(ServerAddress::parse("nbds://127.0.0.1:10810/"), std::invalid_argument);
  CHECK_THROWS_WITH(ServerAddress::parse("nbds://127.0.0.1:10810/"),
                    Catch::Contains("asks for TLS but names no key: give the PSK file with --tls-psk FILE"));
  CHECK_THROWS_WITH(ServerAddress::parse("nbd://127.0.0.1:10810/", {one, ""}),
                    Catch::Contains("--tls-psk " + one + ": TLS options go with a TLS address") &&
                        Catch::Contains("'nbd://127.0.0.1:10810/' is not one"));
  CHECK_THROWS_WITH(ServerAddress::parse("/run/lab.sock", {"", "alice"}),
                    Catch::Contains("--tls-username alice: TLS options go with a TLS address"));
  CHECK_THROWS_WITH(ServerAddress::parse("nbds://h/?tls-psk-file=" + two, {one, ""}),
                    Catch::Contains("--tls-psk " + one + " and tls-psk-file=" + two + " in the URI disagree"));
  CHECK_THROWS_WITH(ServerAddress::parse("nbds://bob@h/", {one, "alice"}),
                    Catch::Contains("--tls-username alice and the URI's user disagree"));
  CHECK_THROWS_WITH(ServerAddress::parse("nbds://h/", {two, ""}), Catch::Contains("choose one with --tls-username"));
  CHECK_THROWS_WITH(ServerAddress::parse("nbds://h/", {(tmp.path / "none").string(), ""}),
                    Catch::Contains("cannot read the PSK file"));
}

TEST_CASE("QEMU's NBD drives: Unix or TCP, with TLS-PSK through a tls-creds-psk object", "[tls][vm]") {
  QemuConfig c;
  c.program = "qemu-system-x86_64";
  c.drives = {NbdDrive{"/run/a,b.sock", "", "", "data", {}}};
  std::string line = quote(qemu_argv(c));
  CHECK_THAT(line, Catch::Contains("-drive file.driver=nbd,file.server.type=unix,file.server.path=/run/a,,b.sock,"
                                   "file.export=data,format=raw,if=none,id=nvjdisk0,cache=none,discard=unmap"));
  CHECK_THAT(line, !Catch::Contains("tls"));

  c.drives = {NbdDrive{"", "127.0.0.1", "10810", "data", {}}, NbdDrive{"", "", "", "journal", {}}};
  c.tls = QemuTlsPsk{"/run/nvjournal/vm-1/tls-psk", "alice"};
  line = quote(qemu_argv(c));
  CHECK_THAT(line, Catch::Contains("-object tls-creds-psk,id=nvj-tls,endpoint=client,"
                                   "dir=/run/nvjournal/vm-1/tls-psk,username=alice"));
  CHECK_THAT(line, Catch::Contains("-drive file.driver=nbd,file.server.type=inet,file.server.host=127.0.0.1,"
                                   "file.server.port=10810,file.export=data,file.tls-creds=nvj-tls,format=raw"));
  CHECK_THAT(line, Catch::Contains("file.server.host=localhost,file.server.port=10809,file.export=journal,"
                                   "file.tls-creds=nvj-tls"));
}

}  // namespace nbd_tls_test
