// SPDX-License-Identifier: BSD-3-Clause
#include "tools/nvj/client/tls_psk.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <stdexcept>

namespace nvj::cli {
namespace fs = std::filesystem;
namespace {

bool is_hex(const std::string& text) {
  for (const char c : text)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'))) return false;
  return true;
}

std::string names_of(const std::vector<PskIdentity>& identities) {
  std::string names;
  for (const auto& i : identities) names += (names.empty() ? "'" : ", '") + i.username + "'";
  return names;
}

}  // namespace

std::vector<PskIdentity> read_psk_file(const fs::path& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read the PSK file " + path.string() + ": " + std::strerror(errno));
  std::vector<PskIdentity> identities;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    const std::size_t colon = line.find(':');
    const std::string key = colon == std::string::npos ? "" : line.substr(colon + 1);
    if (colon == 0 || key.empty() || key.size() % 2 != 0 || !is_hex(key))
      throw std::runtime_error("the PSK file " + path.string() + ", line " + std::to_string(number) +
                               ": expected USERNAME:HEXKEY (as psktool writes)");
    identities.push_back({line.substr(0, colon), key});
  }
  if (in.bad()) throw std::runtime_error("cannot read the PSK file " + path.string() + ": " + std::strerror(errno));
  if (identities.empty()) throw std::runtime_error("the PSK file " + path.string() + " holds no USERNAME:HEXKEY line");
  return identities;
}

PskIdentity pick_psk_identity(const std::vector<PskIdentity>& identities, const std::string& username,
                              const fs::path& path) {
  if (username.empty()) {
    if (identities.size() == 1) return identities.front();
    throw std::runtime_error("the PSK file " + path.string() + " holds several identities (" + names_of(identities) +
                             "): choose one with --tls-username");
  }
  for (const auto& i : identities)
    if (i.username == username) return i;
  throw std::runtime_error("the PSK file " + path.string() + " has no identity '" + username + "' (it has " +
                           names_of(identities) + ")");
}

void write_psk_file(const fs::path& path, const PskIdentity& identity) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) throw std::runtime_error("cannot create " + path.string() + ": " + std::strerror(errno));
  const std::string line = identity.username + ":" + identity.key_hex + "\n";
  const ssize_t n = ::write(fd, line.data(), line.size());
  const int saved = errno;
  ::close(fd);
  if (n != static_cast<ssize_t>(line.size()))
    throw std::runtime_error("cannot write " + path.string() + ": " + std::strerror(n < 0 ? saved : EIO));
}

}  // namespace nvj::cli
