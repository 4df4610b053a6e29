// SPDX-License-Identifier: BSD-3-Clause
// Debian's kernels in a cache of ours, never installed: the packages of a
// suite's linux-image-amd64 (or of a package named at a version) fetched
// with our own apt (debian_archive.h), unpacked side by side, their modules
// indexed with `depmod -b`, and reused next time. From Debian 14 (sid) on a
// kernel is split into linux-binary-V (the vmlinuz), linux-modules-V (the
// .ko.xz) and linux-base-V (modules.builtin); before, linux-image-V holds
// all of it. Each kernel's folder has kernel.json: its version, the
// packages it came from with their SHA-256 (from the archive's signed
// index, checked on the files), the image's SHA-256, the suite and mirror.
//
// Layout of the cache (default /var/cache/nvjournal as root,
// ~/.cache/nvjournal otherwise, or $NVJ_KERNEL_CACHE):
//
//   lock                     held by whoever fetches
//   apt/SUITE/               our apt's configuration, sources and lists
//   kernels/PACKAGE_VERSION/ root/ (the packages unpacked), kernel.json
//   suites/SUITE.json        the kernel the suite named when last asked
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "common/json.h"
#include "tools/nvj/vm/kernel_name.h"

namespace nvj::cli {

struct KernelPackage {
  std::string name, version, sha256;
  std::uint64_t size = 0;
};

struct CachedKernel {
  std::string key;               // its folder's name: "linux-image-7.2.13+deb14-amd64_7.2.13-1"
  std::filesystem::path folder;
  std::string version;           // the kernel's release, as uname -r says it
  std::filesystem::path image;   // the bzImage
  std::filesystem::path modules; // its modules folder, depmod run
  std::string image_sha256;
  std::vector<KernelPackage> packages;  // the first is the one named (or the suite's linux-image-amd64)
  std::string suite;             // the suite it came from
  std::string archive;           // the mirror
  std::string fetched;           // when, UTC, ISO 8601
};

// kernel.json's object, and back (std::runtime_error naming `where` if it
// is not one).
Json cached_kernel_json(const CachedKernel& k);
CachedKernel cached_kernel_from_json(const Json& j, const std::filesystem::path& folder, const std::string& where);

// $NVJ_KERNEL_CACHE, else /var/cache/nvjournal for root, else
// $XDG_CACHE_HOME (or ~/.cache)/nvjournal.
std::filesystem::path default_kernel_cache();

// The suites a package named without a suite is looked for in, in order.
inline constexpr const char* kKnownSuites[] = {"bookworm", "bookworm-backports", "trixie", "trixie-backports",
                                               "sid", "experimental"};

struct FetchOptions {
  bool refresh = false;  // bring the suites' lists up to date even if they are recent
  std::function<void(const std::string&)> say = {};  // progress, for stderr
};

class KernelCache {
 public:
  explicit KernelCache(std::filesystem::path root = default_kernel_cache());

  const std::filesystem::path& root() const { return root_; }

  // The kernel a Debian name (debian_suite or debian_package) names,
  // fetched unless it is cached. A suite's lists older than a day are
  // brought up to date first; when the archive cannot be reached the
  // kernel the suite named last time is used, if there is one (and `say`
  // says so). Throws ArchiveError: unreachable, no_suite, no_package (no
  // such package or version, or packages that hold no kernel), other.
  CachedKernel fetch(const KernelName& name, const FetchOptions& options = {});

  // Every kernel in the cache, by folder name; one whose kernel.json does
  // not read is left out, with a warning on stderr.
  std::vector<CachedKernel> list() const;

  // Removes the cached kernels whose folder name, release or package
  // version is `which` (by folder name also one that list() leaves out);
  // returns how many.
  std::size_t remove(const std::string& which);

 private:
  CachedKernel fetch_locked(const KernelName& name, const FetchOptions& options);

  std::filesystem::path root_;
};

}  // namespace nvj::cli
