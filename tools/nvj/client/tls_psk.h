// SPDX-License-Identifier: BSD-3-Clause
// TLS with a pre-shared key, as `nbdkit --tls=require --tls-psk=FILE` serves
// it: the client's options, the PSK file's identities (USERNAME:HEXKEY lines,
// as psktool writes them) and the one a client presents.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace nvj::cli {

// What nvj attach, bench and vm take with --tls-psk and --tls-username.
struct TlsOptions {
  std::string psk_file;  // "" = none given
  std::string username;  // "" = the file's only identity
};

struct PskIdentity {
  std::string username;
  std::string key_hex;
};

// The identities of a PSK file, in order. Throws std::runtime_error naming
// the file (and the line) if it cannot be read, holds none, or a line is not
// USERNAME:HEXKEY.
std::vector<PskIdentity> read_psk_file(const std::filesystem::path& path);

// The identity called `username`, or with "" the file's only one. Throws
// std::runtime_error naming the file and the identities it holds otherwise.
PskIdentity pick_psk_identity(const std::vector<PskIdentity>& identities, const std::string& username,
                              const std::filesystem::path& path);

// Writes `identity` alone as a PSK file at `path`, created with mode 0600
// (refused if it exists). Throws std::runtime_error if it cannot.
void write_psk_file(const std::filesystem::path& path, const PskIdentity& identity);

}  // namespace nvj::cli
