// SPDX-License-Identifier: BSD-3-Clause
#include "tools/nvj/vm/kernel_cache.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <deque>
#include <set>
#include <stdexcept>

#include "common/unique_fd.h"
#include "tools/nvj/host/files/text_file.h"
#include "tools/nvj/host/processes/process.h"
#include "tools/nvj/vm/debian_archive.h"
#include "tools/nvj/vm/guest_kernel.h"

namespace nvj::cli {
namespace fs = std::filesystem;
namespace {

// A suite's lists are brought up to date when older than this.
constexpr std::chrono::hours kListsMaxAge{24};

// The meta-package a suite's kernel is named by.
constexpr const char* kSuiteKernel = "linux-image-amd64";

bool kernel_package(const std::string& name) {
  for (const char* prefix : {"linux-image-", "linux-binary-", "linux-modules-", "linux-base-"})
    if (name.rfind(prefix, 0) == 0) return true;
  return false;
}

std::string now_utc() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  ::gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

// Whether Debian version a sorts after b (dpkg's own comparison).
bool newer(const std::string& a, const std::string& b) {
  return run({"dpkg", "--compare-versions", a, "gt", b}).status == 0;
}

// flock on the cache's lock file while fetching: two nvj (two tests side
// by side) never unpack into one folder.
class CacheLock {
 public:
  CacheLock(const fs::path& file, const std::function<void(const std::string&)>& say) {
    fd_ = UniqueFd(::open(file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644));
    if (fd_.get() < 0) throw std::runtime_error("cannot open " + file.string() + ": " + std::strerror(errno));
    if (::flock(fd_.get(), LOCK_EX | LOCK_NB) == 0) return;
    if (say) say("waiting for another nvj fetching a kernel into " + file.parent_path().string());
    while (::flock(fd_.get(), LOCK_EX) != 0)
      if (errno != EINTR) throw std::runtime_error("flock " + file.string() + ": " + std::strerror(errno));
  }

 private:
  UniqueFd fd_;
};

// The packages of a kernel: `from` and, through Depends pinned to one
// version (=), every kernel package it needs (linux-image-V,
// linux-binary-V, linux-modules-V, linux-base-V). The first is `from`.
std::vector<PackageRecord> closure(const DebianArchive& archive, const std::string& package, const std::string& version) {
  std::vector<PackageRecord> out;
  std::set<std::string> seen;
  std::deque<std::pair<std::string, std::string>> todo{{package, version}};
  while (!todo.empty()) {
    const auto [name, ver] = todo.front();
    todo.pop_front();
    if (!seen.insert(name).second) continue;
    const auto rec = archive.record(name, ver);
    if (!rec)
      throw ArchiveError(ArchiveError::Kind::no_package,
                         archive.suite() + " has no " + name + "=" + ver + (name == package ? "" : " (needed by " + package + ")"));
    for (const auto& entry : rec->depends)
      for (const Dependency& d : entry)
        if (kernel_package(d.package) && d.relation == "=") {
          todo.emplace_back(d.package, d.version);
          break;
        }
    out.push_back(*rec);
  }
  return out;
}

// The bzImage and release in an unpacked tree: boot/vmlinuz-V (up to
// Debian 13) or [usr/]lib/modules/V/vmlinuz (from 14 on).
std::pair<fs::path, std::string> find_image(const fs::path& root) {
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(root / "boot", ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind("vmlinuz-", 0) == 0) return {e.path(), name.substr(8)};
  }
  for (const char* dir : {"usr/lib/modules", "lib/modules"})
    for (const auto& e : fs::directory_iterator(root / dir, ec))
      if (fs::is_regular_file(e.path() / "vmlinuz")) return {e.path() / "vmlinuz", e.path().filename().string()};
  return {};
}

fs::path modules_of(const fs::path& root, const std::string& version) {
  for (const char* dir : {"usr/lib/modules", "lib/modules"})
    if (fs::is_directory(root / dir / version)) return root / dir / version;
  return {};
}

CachedKernel read_cached(const fs::path& folder) {
  const fs::path file = folder / "kernel.json";
  return cached_kernel_from_json(parse_json(read_text_file(file), file.string()), folder, file.string());
}

std::uint64_t total_size(const std::vector<PackageRecord>& records) {
  std::uint64_t bytes = 0;
  for (const PackageRecord& r : records) bytes += r.size;
  return bytes;
}

// Downloads `records` into `staging`, unpacks them into staging/root, runs
// depmod -b on their modules and writes staging/kernel.json: `k` (its key,
// suite and mirror given) gains the packages, the release, the image and
// its modules. Throws, leaving `staging` to the caller, on any failure.
void unpack_kernel(const DebianArchive& archive, const std::vector<PackageRecord>& records, const fs::path& staging,
                   CachedKernel& k, const std::function<void(const std::string&)>& say) {
  for (const PackageRecord& r : records) {
    const fs::path deb = archive.download(r, staging / "debs");
    const RunResult x = run({"dpkg-deb", "-x", deb.string(), (staging / "root").string()});
    if (x.status != 0) throw std::runtime_error("dpkg-deb -x " + deb.string() + ": " + x.output);
    fs::remove(deb);
    k.packages.push_back({r.package, r.version, r.sha256, r.size});
  }
  fs::remove_all(staging / "debs");
  const auto [image, release] = find_image(staging / "root");
  if (image.empty()) {
    std::string names;
    for (const PackageRecord& r : records) names += (names.empty() ? "" : ", ") + r.package + "=" + r.version;
    throw ArchiveError(ArchiveError::Kind::no_package, "its packages (" + names + ") hold no kernel image");
  }
  k.version = release;
  k.modules = modules_of(staging / "root", release);
  if (!k.modules.empty()) {
    // depmod -b reads ROOT/lib/modules: from Debian 14 on they are in /usr.
    if (!fs::exists(staging / "root/lib")) fs::create_directory_symlink("usr/lib", staging / "root/lib");
    say("depmod " + release);
    const RunResult d = run({"depmod", "-b", (staging / "root").string(), release});
    if (d.status != 0 || !fs::exists(k.modules / "modules.dep"))
      throw std::runtime_error("depmod -b " + (staging / "root").string() + " " + release + " failed: " + d.output);
  }
  k.image_sha256 = file_sha256(image);
  k.fetched = now_utc();
  k.folder = staging;
  k.image = image;
  write_text_file(staging / "kernel.json", to_json_text(cached_kernel_json(k), 2) + "\n");
}

}  // namespace

Json cached_kernel_json(const CachedKernel& k) {
  Json packages = Json::array();
  for (const KernelPackage& p : k.packages)
    packages.push_back(Json{{"name", p.name}, {"version", p.version}, {"sha256", p.sha256}, {"size", p.size}});
  return Json{{"version", k.version},
              {"image", fs::relative(k.image, k.folder).string()},
              {"image_sha256", k.image_sha256},
              {"modules", k.modules.empty() ? std::string() : fs::relative(k.modules, k.folder).string()},
              {"packages", packages},
              {"suite", k.suite},
              {"archive", k.archive},
              {"fetched", k.fetched}};
}

CachedKernel cached_kernel_from_json(const Json& j, const fs::path& folder, const std::string& where) {
  try {
    CachedKernel k;
    k.key = folder.filename().string();
    k.folder = folder;
    k.version = j.at("version").get<std::string>();
    k.image = folder / j.at("image").get<std::string>();
    k.image_sha256 = j.at("image_sha256").get<std::string>();
    // "": no modules, every driver built in.
    if (const std::string m = j.at("modules").get<std::string>(); !m.empty()) k.modules = folder / m;
    for (const Json& p : j.at("packages"))
      k.packages.push_back({p.at("name").get<std::string>(), p.at("version").get<std::string>(),
                            p.at("sha256").get<std::string>(), p.at("size").get<std::uint64_t>()});
    k.suite = j.at("suite").get<std::string>();
    k.archive = j.at("archive").get<std::string>();
    k.fetched = j.at("fetched").get<std::string>();
    return k;
  } catch (const Json::exception& e) {
    throw std::runtime_error(where + ": not a cached kernel's description (" + e.what() + ")");
  }
}

fs::path default_kernel_cache() {
  if (const char* env = std::getenv("NVJ_KERNEL_CACHE"); env != nullptr && *env != '\0') return env;
  if (::geteuid() == 0) return "/var/cache/nvjournal";
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg != nullptr && *xdg == '/') return fs::path(xdg) / "nvjournal";
  const char* home = std::getenv("HOME");
  return fs::path(home != nullptr && *home != '\0' ? home : "/tmp") / ".cache/nvjournal";
}

KernelCache::KernelCache(fs::path root) : root_(std::move(root)) {}

CachedKernel KernelCache::fetch(const KernelName& name, const FetchOptions& options) {
  if (name.kind == KernelName::Kind::path) throw std::invalid_argument(name.text + " is no Debian kernel name");
  fs::create_directories(root_);
  const CacheLock lock(root_ / "lock", options.say);
  return fetch_locked(name, options);
}

CachedKernel KernelCache::fetch_locked(const KernelName& name, const FetchOptions& options) {
  const auto say = [&](const std::string& what) {
    if (options.say) options.say(what);
  };
  const DebianMirrors mirrors = debian_mirrors();
  const auto archive_of = [&](const std::string& suite) { return DebianArchive(root_ / "apt" / suite, suite, mirrors); };

  // Which packages, from which suite.
  std::string suite, package, version;
  if (name.kind == KernelName::Kind::debian_suite) {
    suite = name.suite;
    package = kSuiteKernel;
    DebianArchive archive = archive_of(suite);
    try {
      archive.refresh(kListsMaxAge, options.refresh);
    } catch (const ArchiveError& e) {
      const fs::path last = root_ / "suites" / (suite + ".json");
      if (e.kind() != ArchiveError::Kind::unreachable || !fs::exists(last)) throw;
      // What the suite named last time, if that still reads: else the
      // archive's error stands.
      CachedKernel k;
      std::string at;
      try {
        const Json j = parse_json(read_text_file(last), last.string());
        const fs::path folder = root_ / "kernels" / j.at("kernel").get<std::string>();
        at = j.at("at").get<std::string>();
        if (!fs::exists(folder / "kernel.json")) throw;
        k = read_cached(folder);
      } catch (const std::exception&) {
        throw e;
      }
      say(std::string(e.what()) + ": using " + name.text + " as it was on " + at + " (" + k.version + ")");
      return k;
    }
    std::vector<std::string> versions = archive.versions(package);
    if (versions.empty()) {  // lists cleared behind our back: once more, from the archive
      archive.refresh(kListsMaxAge, true);
      versions = archive.versions(package);
    }
    if (versions.empty()) throw ArchiveError(ArchiveError::Kind::no_package, suite + " has no " + package);
    version = versions.front();
  } else {
    // A package at a version is the same whoever fetched it: the cache's,
    // if it has it (the archive keeps only each suite's newest).
    if (!name.version.empty())
      for (const CachedKernel& c : list())
        for (const KernelPackage& p : c.packages)
          if (p.name == name.package && p.version == name.version) return c;
    package = name.package;
    version = name.version;
    std::string best;  // the newest version seen, when none is named
    for (const char* s : kKnownSuites) {
      DebianArchive archive = archive_of(s);
      try {
        archive.refresh(kListsMaxAge, options.refresh);
      } catch (const ArchiveError& e) {
        if (e.kind() == ArchiveError::Kind::no_suite) continue;  // gone from the archive: the others will do
        throw;
      }
      for (const std::string& v : archive.versions(package))
        if (name.version.empty() ? (best.empty() || newer(v, best)) : v == name.version) {
          best = v;
          suite = s;
        }
      if (!name.version.empty() && !suite.empty()) break;
    }
    if (suite.empty()) {
      std::string known;
      for (const char* s : kKnownSuites) known += (known.empty() ? "" : ", ") + std::string(s);
      throw ArchiveError(ArchiveError::Kind::no_package,
                         "no suite of " + known + " has " + package + (version.empty() ? "" : "=" + version));
    }
    version = best;
  }

  const DebianArchive archive = archive_of(suite);
  const std::vector<PackageRecord> records = closure(archive, package, version);
  // The folder is named by the package that holds the image (or names it).
  const PackageRecord* naming = &records.front();
  for (const PackageRecord& r : records)
    if (r.package.rfind("linux-image-", 0) == 0 && r.package != kSuiteKernel) naming = &r;
  const std::string key = naming->package + "_" + naming->version;
  const fs::path folder = root_ / "kernels" / key;
  if (!fs::exists(folder / "kernel.json")) {
    // Unpacked beside, moved in whole: a fetch cut short leaves nothing
    // that looks cached (and the next one clears it; the lock is ours).
    const fs::path staging = root_ / "kernels" / (".staging-" + key);
    fs::remove_all(staging);
    fs::create_directories(staging / "root");
    try {
      CachedKernel k;
      k.key = key;
      k.suite = suite;
      k.archive = mirrors.archive;
      say("fetching " + name.text + ": " + std::to_string(records.size()) + " packages of " + suite + ", " +
          std::to_string(total_size(records) >> 20) + " MiB, into " + root_.string());
      unpack_kernel(archive, records, staging, k, say);
      fs::rename(staging, folder);
      say("fetched " + name.text + ": " + k.version + " (" + key + ")");
    } catch (...) {
      std::error_code ec;
      fs::remove_all(staging, ec);  // nothing half-fetched stays
      throw;
    }
  }
  CachedKernel k = read_cached(folder);
  fs::create_directories(root_ / "suites");
  if (name.kind == KernelName::Kind::debian_suite)
    write_text_file(root_ / "suites" / (suite + ".json"), to_json_text(Json{{"kernel", key}, {"at", now_utc()}}) + "\n");
  return k;
}

std::vector<CachedKernel> KernelCache::list() const {
  std::vector<CachedKernel> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(root_ / "kernels", ec)) {
    if (e.path().filename().string().front() == '.' || !fs::exists(e.path() / "kernel.json")) continue;
    try {
      out.push_back(read_cached(e.path()));
    } catch (const std::runtime_error& bad) {  // one damaged entry hides no other
      std::fprintf(stderr, "nvj: %s; skipped (nvj kernel remove %s)\n", bad.what(),
                   e.path().filename().string().c_str());
    }
  }
  std::sort(out.begin(), out.end(), [](const CachedKernel& a, const CachedKernel& b) { return a.key < b.key; });
  return out;
}

std::size_t KernelCache::remove(const std::string& which) {
  fs::create_directories(root_);
  const CacheLock lock(root_ / "lock", {});
  std::size_t n = 0;
  // A folder by its name, even one whose description no longer reads.
  if (const fs::path folder = root_ / "kernels" / which;
      !which.empty() && which.find('/') == std::string::npos && which.front() != '.' &&
      fs::exists(folder / "kernel.json")) {
    fs::remove_all(folder);
    return 1;
  }
  for (const CachedKernel& k : list()) {
    bool named = k.key == which || k.version == which;
    for (const KernelPackage& p : k.packages) named = named || p.version == which;
    if (!named) continue;
    fs::remove_all(k.folder);
    ++n;
  }
  return n;
}

}  // namespace nvj::cli
