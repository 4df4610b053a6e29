// SPDX-License-Identifier: BSD-3-Clause
// The kernel nvj vm boots and the modules its guest loads: the
// distribution's kernel (Debian's linux-image-amd64) by default, whose
// virtio and ext4 drivers are modules, or one --kernel names: a file, a
// folder, or a Debian kernel by suite or package (kernel_name.h).
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "common/json.h"
#include "tools/nvj/vm/kernel_cache.h"

namespace nvj::cli {

struct GuestKernel {
  std::filesystem::path image;    // the bzImage QEMU loads
  std::string version;            // "6.1.0-56-amd64"
  std::filesystem::path modules;  // its modules: /lib/modules/VERSION; empty: the drivers are built in
  std::string name;               // as --kernel gave it ("debian:sid", a path), or the distribution's package
  std::string image_sha256;       // of `image`
  std::vector<KernelPackage> packages;  // the Debian packages it came from, when known
  std::string suite;              // the Debian suite it was fetched from ("" if none)
};

// The package that provides the default kernel, for messages and the installer.
inline constexpr const char* kKernelPackage = "linux-image-amd64";

// The distribution's kernel: the one the kernel package depends on (not the
// running kernel: the host may run another one, without modules), else the
// newest BOOT/vmlinuz-VERSION that has MODULES_ROOT/VERSION. nullopt if none.
std::optional<GuestKernel> find_distribution_kernel(const std::filesystem::path& boot = "/boot",
                                                    const std::filesystem::path& modules_root = "/lib/modules");

// A kernel given by path; its modules from `modules`, or when that is empty
// from /lib/modules/VERSION, VERSION read from the image. Throws
// std::runtime_error naming what is missing.
GuestKernel given_kernel(const std::filesystem::path& image, const std::filesystem::path& modules = {});

// A kernel a developer built in `dir`: its bzImage (arch/x86/boot/bzImage
// of a source tree, or bzImage, vmlinuz or boot/vmlinuz-VERSION), its
// modules where `make modules_install INSTALL_MOD_PATH=DIR` puts them
// (DIR/lib/modules/VERSION, or DIR/usr/lib/modules/VERSION); without them
// its drivers must be built in. Throws std::runtime_error naming what is
// missing.
GuestKernel kernel_in_folder(const std::filesystem::path& dir);

// The kernel a --kernel value names (kernel_name.h): a bzImage (its
// modules from `modules` or /lib/modules/VERSION), a folder
// (kernel_in_folder), or a Debian kernel from the cache (kernel_cache.h),
// fetched if missing, progress on stderr. Its image's SHA-256 is filled in.
// A UsageError prefixed with `command` for a name that names no kernel: no
// name, a file or folder that is missing or holds no kernel, a suite or
// package the archive does not have, a package without a kernel, an
// archive out of reach with nothing cached, --modules with a folder or a
// Debian name; std::runtime_error (not prefixed) for a failure on the way.
// `refresh`: a Debian suite's package lists brought up to date even if
// they are recent (nvj kernel fetch --refresh).
GuestKernel named_kernel(const std::string& text, const std::string& modules, const std::string& command,
                         bool refresh = false);

// The kernels a repeatable, comma-separated --kernel names, each as
// named_kernel does. A UsageError, prefixed with `command`, for an empty
// name or a release given twice.
std::vector<GuestKernel> named_kernels(const std::vector<std::string>& lists, const std::string& command);

// The distribution's kernel with its checksum, or a std::runtime_error
// saying to install it or give one with --kernel.
GuestKernel distribution_kernel(const std::string& command);

// What results say of a kernel: its name, release, image and its SHA-256,
// packages, suite.
Json guest_kernel_json(const GuestKernel& kernel);

// The --kernel value that names this very kernel again: a Debian kernel by
// its package and version ("debian:linux-image-amd64=7.2.13-1", which the
// cache keeps after the suite has moved on), else the name it was given.
std::string reproducible_name(const GuestKernel& kernel);

// Which kernel, for people, from guest_kernel_json's object: the name it
// was given, the package its image came from (linux-binary-V from Debian
// 14 on, else linux-image-V), its image's checksum cut short:
// "debian:sid: linux-binary-7.2.13+deb14-amd64 7.2.13-1, sha256 6a33775e282b".
std::string kernel_label(const Json& kernel);

// Its release and label: "7.2.13+deb14-amd64 (debian:sid: ...)".
std::string describe_kernel(const GuestKernel& kernel);

// The version in a bzImage's setup header ("6.1.0-56-amd64"), or "" if the
// file is not a bzImage.
std::string bzimage_version(const std::filesystem::path& image);

struct GuestModule {
  std::string name;             // "virtio_scsi"
  std::filesystem::path file;   // under the modules folder
  bool optional = false;        // a soft dependency: the guest goes on if it does not load
};

// The modules to insmod for `wanted`, in loading order: each one after the
// modules it depends on (modules.dep) and the ones it asks for softly
// (modules.softdep's "pre:", through modules.alias: the generic
// implementation where there are several), each once; built-in ones
// (modules.builtin) left out. A soft dependency no module provides is left
// out, and one that is there is `optional` (its insmod may fail: a driver
// for a processor feature the guest lacks). Throws naming a wanted module
// that is neither a module nor built in. An empty `modules_dir`: every
// driver is built in, nothing to load.
std::vector<GuestModule> resolve_modules(const std::filesystem::path& modules_dir,
                                         const std::vector<std::string>& wanted);

// A module's bytes, decompressed if it is .ko.xz, .ko.zst or .ko.gz
// (busybox's insmod takes plain ELF only).
std::string module_bytes(const std::filesystem::path& file);

}  // namespace nvj::cli
