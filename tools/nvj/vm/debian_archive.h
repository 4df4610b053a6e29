// SPDX-License-Identifier: BSD-3-Clause
// Debian's archive through an apt of our own: one folder per suite with its
// own configuration, sources, lists and no package database, so that apt
// finds and downloads packages without installing anything and without
// reading or touching this host's apt sources (APT_CONFIG names our
// configuration, which names our folders for everything apt reads). Of
// the host's configuration only how it reaches archives is carried over:
// its proxies, and whether a Release file past its Valid-Until date is
// taken (a snapshot mirror's). The packages' signatures are checked
// against the host's debian-archive-keyring, as apt checks its own.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace nvj::cli {

// What the archive could not give, by kind: the caller turns `unreachable`,
// `no_suite` and `no_package` into usage errors (the name given was
// wrong, or the archive is out of reach), the rest into failures.
class ArchiveError : public std::runtime_error {
 public:
  enum class Kind { unreachable, no_suite, no_package, other };
  ArchiveError(Kind kind, const std::string& what) : std::runtime_error(what), kind_(kind) {}
  Kind kind() const { return kind_; }

 private:
  Kind kind_;
};

struct DebianMirrors {
  std::string archive;   // "http://deb.debian.org/debian"
  std::string security;  // "http://deb.debian.org/debian-security"
};

// $NVJ_DEBIAN_MIRROR and $NVJ_DEBIAN_SECURITY_MIRROR when set; else the
// mirrors this host's apt reads Debian from (apt-get indextargets); else
// deb.debian.org.
DebianMirrors debian_mirrors();

// The keyring the archive's Release files are checked with.
inline constexpr const char* kDebianKeyring = "/usr/share/keyrings/debian-archive-keyring.gpg";

// One alternative of a Depends field: "linux-image-7.3-amd64 (= 7.3~rc7-1~exp1)".
struct Dependency {
  std::string package;
  std::string relation;  // "=", ">=", ... ("" without a version)
  std::string version;
};

struct PackageRecord {
  std::string package, version;
  std::string sha256;    // of the .deb, from the signed index
  std::string filename;  // in the archive: "pool/main/l/..."
  std::uint64_t size = 0;
  std::vector<std::vector<Dependency>> depends;  // each entry a list of alternatives
};

// The fields of one apt-cache show stanza; nullopt if `text` has none.
// Pure: the tests feed it stanzas.
std::optional<PackageRecord> parse_package_record(const std::string& text);

class DebianArchive {
 public:
  // The apt state for `suite` in `folder` (made if missing). Its sources:
  // the suite, and for a release (not sid, unstable, experimental or a
  // suite with a '-' of its own) its -updates and -security, which its
  // users get too.
  DebianArchive(std::filesystem::path folder, std::string suite, DebianMirrors mirrors);

  const std::string& suite() const { return suite_; }

  // apt-get update when the lists are older than `max_age`, missing, or
  // `force`. Throws ArchiveError: unreachable (no answer from the mirror),
  // no_suite (the archive has no such suite), other.
  void refresh(std::chrono::seconds max_age, bool force = false);

  // When the lists were last brought up to date from the sources they have
  // now (nullopt: never, or from other sources: another mirror).
  std::optional<std::filesystem::file_time_type> updated() const;

  // Every version of `package` in the suite's lists, newest first (none: empty).
  std::vector<std::string> versions(const std::string& package) const;

  // The record of `package` at `version`, nullopt if the lists have none.
  std::optional<PackageRecord> record(const std::string& package, const std::string& version) const;

  // Downloads the .deb into `dir` (apt checks it against the index) and
  // returns its path, its SHA-256 checked again. Throws ArchiveError.
  std::filesystem::path download(const PackageRecord& record, const std::filesystem::path& dir) const;

 private:
  std::vector<std::string> env() const;
  void write_configuration(bool with_extras) const;

  std::filesystem::path folder_;
  std::string suite_;
  DebianMirrors mirrors_;
};

// The SHA-256 of a file, as sha256sum prints it (64 hex digits).
std::string file_sha256(const std::filesystem::path& file);

}  // namespace nvj::cli
