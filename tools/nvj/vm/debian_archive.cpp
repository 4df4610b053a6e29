// SPDX-License-Identifier: BSD-3-Clause
#include "tools/nvj/vm/debian_archive.h"

#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>

#include "tools/nvj/host/files/text_file.h"
#include "tools/nvj/host/processes/process.h"

namespace nvj::cli {
namespace fs = std::filesystem;
namespace {

constexpr const char* kDefaultArchive = "http://deb.debian.org/debian";
constexpr const char* kDefaultSecurity = "http://deb.debian.org/debian-security";

std::string env_or(const char* name, const std::string& fallback) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? std::string(value) : fallback;
}

std::string trimmed(std::string s) {
  while (!s.empty() && (s.back() == '/' || s.back() == ' ' || s.back() == '\n')) s.pop_back();
  return s;
}

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// A release's users get its -updates and -security too; sid, experimental
// and the suites that are already a part of another (bookworm-backports)
// have none.
bool has_extras(const std::string& suite) {
  static const std::set<std::string> kNone{"sid", "unstable", "experimental", "rc-buggy"};
  return kNone.count(suite) == 0 && suite.find('-') == std::string::npos;
}

std::vector<Dependency> alternatives(const std::string& text) {
  std::vector<Dependency> out;
  std::stringstream in(text);
  for (std::string alt; std::getline(in, alt, '|');) {
    std::istringstream words(alt);
    Dependency d;
    words >> d.package;
    if (d.package.empty()) continue;
    if (const std::size_t colon = d.package.find(':'); colon != std::string::npos) d.package.resize(colon);  // ":any"
    std::string rest;
    std::getline(words, rest);
    const std::size_t open = rest.find('('), close = rest.find(')');
    if (open != std::string::npos && close != std::string::npos && close > open) {
      std::istringstream rel(rest.substr(open + 1, close - open - 1));
      rel >> d.relation >> d.version;
    }
    out.push_back(d);
  }
  return out;
}

// apt's words for a mirror it could not reach.
constexpr const char* kUnreachable[] = {"Could not resolve", "Temporary failure resolving", "Could not connect",
                                        "Failed to connect", "Connection failed", "Connection timed out",
                                        "Unable to connect", "No route to host", "Network is unreachable"};

// The line that says why the mirror is out of reach, "" if none does.
std::string unreachable(const std::string& output) {
  std::istringstream in(output);
  for (std::string line; std::getline(in, line);)
    for (const char* words : kUnreachable)
      if (const std::size_t at = line.find(words); at != std::string::npos) return trimmed(line.substr(at));
  return "";
}

// The first line that says what went wrong ("E: ..." or "Err:...").
std::string first_error(const std::string& output) {
  std::istringstream in(output);
  std::string fallback;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("E: ", 0) == 0) return line.substr(3);
    if (fallback.empty() && (line.rfind("Err:", 0) == 0 || line.rfind("W: ", 0) == 0)) fallback = line;
  }
  return fallback.empty() ? trimmed(output) : fallback;
}

// What this host's apt says of reaching an archive (its proxies, whether a
// Release file may be past its Valid-Until, as a snapshot mirror's is), as
// configuration lines: our apt reaches the archive the way the host's does.
std::string host_acquire_settings() {
  std::string out;
  try {
    const RunResult r = run({"apt-config", "dump"});
    std::istringstream in(r.status == 0 ? r.output : "");
    for (std::string line; std::getline(in, line);)
      for (const char* key : {"Acquire::Check-Valid-Until ", "Acquire::Check-Date ", "Acquire::http::Proxy ",
                              "Acquire::https::Proxy ", "Acquire::ftp::Proxy "})
        if (line.rfind(key, 0) == 0) out += line + "\n";
  } catch (const std::runtime_error&) {
    // No apt-config: nothing to carry over.
  }
  return out;
}

}  // namespace

DebianMirrors debian_mirrors() {
  DebianMirrors m{env_or("NVJ_DEBIAN_MIRROR", ""), env_or("NVJ_DEBIAN_SECURITY_MIRROR", "")};
  if (m.archive.empty() || m.security.empty()) {
    // "http://deb.debian.org/debian bookworm-updates" per index of the host's apt.
    try {
      const RunResult r = run({"apt-get", "indextargets", "--format", "$(REPO_URI) $(RELEASE)", "Identifier: Packages"});
      std::istringstream in(r.status == 0 ? r.output : "");
      for (std::string uri, release; in >> uri >> release;) {
        uri = trimmed(uri);
        if (m.security.empty() && ends_with(release, "-security") && ends_with(uri, "/debian-security")) m.security = uri;
        if (m.archive.empty() && !ends_with(release, "-security") && ends_with(uri, "/debian")) m.archive = uri;
      }
    } catch (const std::runtime_error&) {
      // No apt-get: not a Debian host; the defaults will do.
    }
  }
  if (m.archive.empty()) m.archive = kDefaultArchive;
  if (m.security.empty()) m.security = kDefaultSecurity;
  m.archive = trimmed(m.archive);
  m.security = trimmed(m.security);
  return m;
}

std::optional<PackageRecord> parse_package_record(const std::string& text) {
  PackageRecord r;
  std::istringstream in(text);
  std::string depends, pre;
  for (std::string line; std::getline(in, line);) {
    if (line.empty()) {
      if (!r.package.empty()) break;  // the first stanza only
      continue;
    }
    const std::size_t colon = line.find(": ");
    if (colon == std::string::npos || line[0] == ' ') continue;
    const std::string key = line.substr(0, colon), value = line.substr(colon + 2);
    if (key == "Package") r.package = value;
    else if (key == "Version") r.version = value;
    else if (key == "SHA256") r.sha256 = value;
    else if (key == "Filename") r.filename = value;
    else if (key == "Size") r.size = std::strtoull(value.c_str(), nullptr, 10);
    else if (key == "Depends") depends = value;
  }
  if (r.package.empty() || r.version.empty()) return std::nullopt;
  std::stringstream entries(depends);
  for (std::string entry; std::getline(entries, entry, ',');)
    if (auto alts = alternatives(entry); !alts.empty()) r.depends.push_back(alts);
  return r;
}

DebianArchive::DebianArchive(fs::path folder, std::string suite, DebianMirrors mirrors)
    : folder_(std::move(folder)), suite_(std::move(suite)), mirrors_(std::move(mirrors)) {
  for (const char* d : {"etc/apt.conf.d", "etc/sources.list.d", "etc/preferences.d", "etc/trusted.gpg.d",
                        "state/lists/partial", "cache/archives/partial", "log"})
    fs::create_directories(folder_ / d);
  if (!fs::exists(folder_ / "state/status")) std::ofstream(folder_ / "state/status");
  write_configuration(!fs::exists(folder_ / "no-extras"));
}

void DebianArchive::write_configuration(bool with_extras) const {
  const std::string keyring = std::string("[signed-by=") + kDebianKeyring + "]";
  std::ofstream sources(folder_ / "etc/sources.list");
  sources << "# nvjournal's own: never this host's apt sources\n"
          << "deb " << keyring << " " << mirrors_.archive << " " << suite_ << " main\n";
  if (with_extras && has_extras(suite_))
    sources << "deb " << keyring << " " << mirrors_.archive << " " << suite_ << "-updates main\n"
            << "deb " << keyring << " " << mirrors_.security << " " << suite_ << "-security main\n";
  const std::string f = folder_.string();
  std::ofstream conf(folder_ / "apt.conf");
  conf << "// nvjournal's apt for " << suite_ << ": our folders only, nothing installed\n"
       << "Dir::Etc \"" << f << "/etc/\";\n"
       << "Dir::Etc::main \"/dev/null\";\n"
       << "Dir::Etc::parts \"" << f << "/etc/apt.conf.d\";\n"
       << "Dir::Etc::sourcelist \"" << f << "/etc/sources.list\";\n"
       << "Dir::Etc::sourceparts \"" << f << "/etc/sources.list.d\";\n"
       << "Dir::Etc::preferences \"" << f << "/etc/preferences\";\n"
       << "Dir::Etc::preferencesparts \"" << f << "/etc/preferences.d\";\n"
       << "Dir::Etc::trusted \"" << f << "/etc/trusted.gpg\";\n"
       << "Dir::Etc::trustedparts \"" << f << "/etc/trusted.gpg.d\";\n"
       << "Dir::State \"" << f << "/state/\";\n"
       << "Dir::State::status \"" << f << "/state/status\";\n"
       << "Dir::Cache \"" << f << "/cache/\";\n"
       << "Dir::Cache::srcpkgcache \"\";\n"  // no sources: 48 MiB a suite for nothing
       << "Dir::Log \"" << f << "/log/\";\n"
       << "APT::Architecture \"amd64\";\n"
       << "APT::Architectures { \"amd64\"; };\n"
       << "Acquire::Languages \"none\";\n"
       << "Acquire::GzipIndexes \"true\";\n"  // the lists kept compressed: a suite's are 60 MiB unpacked
       << "Acquire::Retries \"2\";\n"
       << "Acquire::http::Timeout \"30\";\n"
       << "// as this host's apt reaches archives\n"
       << host_acquire_settings()
       // Our folders are root's: apt's download user could not write them.
       << (::geteuid() == 0 ? "APT::Sandbox::User \"root\";\n" : "");
}

std::vector<std::string> DebianArchive::env() const {
  return {"APT_CONFIG=" + (folder_ / "apt.conf").string(), "LC_ALL=C.UTF-8", "DEBIAN_FRONTEND=noninteractive"};
}

std::optional<fs::file_time_type> DebianArchive::updated() const {
  // The stamp holds the sources it was made for: lists of another mirror
  // are no lists of this one.
  if (read_text_file(folder_ / "updated") != read_text_file(folder_ / "etc/sources.list")) return std::nullopt;
  std::error_code ec;
  const auto t = fs::last_write_time(folder_ / "updated", ec);
  if (ec) return std::nullopt;
  return t;
}

void DebianArchive::refresh(std::chrono::seconds max_age, bool force) {
  if (!force)
    if (const auto t = updated(); t && fs::file_time_type::clock::now() - *t < max_age) return;
  if (!fs::exists(kDebianKeyring))
    throw ArchiveError(ArchiveError::Kind::other, std::string("no ") + kDebianKeyring +
                                                      " to check Debian's archive with: install debian-archive-keyring");
  const std::string main_release = "'" + mirrors_.archive + " " + suite_ + " Release'";
  for (bool extras : {!fs::exists(folder_ / "no-extras"), false}) {
    write_configuration(extras);
    const RunResult r = run({"apt-get", "update", "-q"}, env(), std::chrono::minutes(10));
    const bool no_release = r.output.find("does not have a Release file") != std::string::npos;
    if (r.status == 0 && r.output.find("W: Failed to fetch") == std::string::npos) {
      std::ofstream(folder_ / "updated") << read_text_file(folder_ / "etc/sources.list");
      fs::last_write_time(folder_ / "updated", fs::file_time_type::clock::now());
      return;
    }
    if (const std::string why = unreachable(r.output); !why.empty())
      throw ArchiveError(ArchiveError::Kind::unreachable, "Debian's archive (" + mirrors_.archive + ") cannot be reached: " + why);
    if (no_release && r.output.find(main_release) != std::string::npos)
      throw ArchiveError(ArchiveError::Kind::no_suite,
                         "Debian's archive (" + mirrors_.archive + ") has no suite " + suite_ +
                             " (it has bookworm, trixie, sid, experimental and the other current suites)");
    // The suite is there but its -updates or -security is not: without
    // them, from now on.
    if (!(no_release && extras && has_extras(suite_)))
      throw ArchiveError(ArchiveError::Kind::other, "apt-get update for " + suite_ + " failed: " + first_error(r.output));
    std::ofstream(folder_ / "no-extras") << "the archive has no " << suite_ << "-updates or -security\n";
  }
}

std::vector<std::string> DebianArchive::versions(const std::string& package) const {
  const RunResult r = run({"apt-cache", "madison", package}, env());
  std::vector<std::string> out;
  std::istringstream in(r.status == 0 ? r.output : "");
  for (std::string line; std::getline(in, line);) {
    // "linux-image-amd64 |   7.2.13-1 | http://... sid/main amd64 Packages"
    const std::size_t a = line.find('|'), b = line.find('|', a == std::string::npos ? a : a + 1);
    if (a == std::string::npos || b == std::string::npos) continue;
    if (trimmed(line.substr(0, a)).find(' ') != std::string::npos) continue;
    std::istringstream v(line.substr(a + 1, b - a - 1));
    std::string version;
    v >> version;
    if (!version.empty() && (out.empty() || out.back() != version)) out.push_back(version);
  }
  return out;
}

std::optional<PackageRecord> DebianArchive::record(const std::string& package, const std::string& version) const {
  const RunResult r = run({"apt-cache", "show", package + "=" + version}, env());
  if (r.status != 0) return std::nullopt;
  auto rec = parse_package_record(r.output);
  if (rec && (rec->package != package || rec->version != version)) return std::nullopt;
  return rec;
}

fs::path DebianArchive::download(const PackageRecord& record, const fs::path& dir) const {
  fs::create_directories(dir);
  const RunResult r = run({"env", "-C", dir.string(), "apt-get", "download", "-q", record.package + "=" + record.version},
                          env(), std::chrono::minutes(30));
  if (r.status != 0)
    throw ArchiveError(unreachable(r.output).empty() ? ArchiveError::Kind::other : ArchiveError::Kind::unreachable,
                       "apt-get download " + record.package + "=" + record.version + ": " + first_error(r.output));
  for (const auto& entry : fs::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind(record.package + "_", 0) != 0 || !ends_with(name, ".deb")) continue;
    if (!record.sha256.empty() && file_sha256(entry.path()) != record.sha256)
      throw ArchiveError(ArchiveError::Kind::other, entry.path().string() + ": its SHA-256 is not the index's " +
                                                        record.sha256);
    return entry.path();
  }
  throw ArchiveError(ArchiveError::Kind::other,
                     "apt-get download " + record.package + "=" + record.version + " left no .deb in " + dir.string());
}

std::string file_sha256(const fs::path& file) {
  const RunResult r = run({"sha256sum", "--", file.string()});
  if (r.status != 0 || r.output.size() < 64) throw std::runtime_error("sha256sum " + file.string() + ": " + r.output);
  return r.output.substr(0, 64);
}

}  // namespace nvj::cli
