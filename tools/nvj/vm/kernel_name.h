// SPDX-License-Identifier: BSD-3-Clause
// What a --kernel value names, before anything is looked up: a bzImage, a
// folder a developer built a kernel in, or a Debian kernel by suite or by
// package (fetched into a cache of ours: kernel_cache.h). Pure.
//
//   /boot/vmlinuz-6.1.0-56-amd64      a file: a bzImage
//   ~/linux                           a folder: its bzImage and modules
//   debian:sid                        the kernel a suite's linux-image-amd64 is today
//   debian:linux-image-amd64=7.2.13-1 a package at a version, from any suite we know
//   debian:linux-image-6.12.117+deb13-amd64
//                                     a package at the newest version we know
#pragma once

#include <string>
#include <vector>

namespace nvj::cli {

struct KernelName {
  enum class Kind { path, debian_suite, debian_package };
  Kind kind = Kind::path;
  std::string text;     // as given
  std::string path;     // Kind::path: a file or a folder (which, is looked up later)
  std::string suite;    // debian_suite: "sid"
  std::string package;  // debian_package: "linux-image-amd64"
  std::string version;  // debian_package: "7.2.13-1", "" for the newest
};

// The prefix of a Debian name.
inline constexpr const char* kDebianPrefix = "debian:";

// Parses one value. Throws std::invalid_argument with what is wrong: an
// empty value, "debian:" with nothing after it, a suite or package name
// that is not one, an empty version after '='.
KernelName parse_kernel_name(const std::string& text);

// Each value of a repeatable, comma-separated --kernel, in order: "a,b" is
// two names; an empty one (",", a trailing comma) is refused as above.
std::vector<KernelName> parse_kernel_names(const std::vector<std::string>& lists);

}  // namespace nvj::cli
