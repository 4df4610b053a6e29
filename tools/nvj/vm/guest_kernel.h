// SPDX-License-Identifier: BSD-3-Clause
// The kernel nvj vm boots and the modules its guest loads: the
// distribution's kernel (Debian's linux-image-amd64) by default, whose
// virtio and ext4 drivers are modules, or one given with --kernel.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace nvj::cli {

struct GuestKernel {
  std::filesystem::path image;    // the bzImage QEMU loads
  std::string version;            // "6.1.0-56-amd64"
  std::filesystem::path modules;  // its modules: /lib/modules/VERSION
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

// The kernels --kernel names: each value a bzImage or several,
// comma-separated, each checked as given_kernel does. A UsageError,
// prefixed with `command`, for an empty name, a file that is no kernel with
// modules, or a version given twice.
std::vector<GuestKernel> given_kernels(const std::vector<std::string>& lists, const std::string& command);

// The version in a bzImage's setup header ("6.1.0-56-amd64"), or "" if the
// file is not a bzImage.
std::string bzimage_version(const std::filesystem::path& image);

struct GuestModule {
  std::string name;             // "virtio_scsi"
  std::filesystem::path file;   // under the modules folder
};

// The modules to insmod for `wanted`, in loading order: each one after the
// modules it depends on (modules.dep), each once; built-in ones
// (modules.builtin) left out. Throws naming a module that is neither.
std::vector<GuestModule> resolve_modules(const std::filesystem::path& modules_dir,
                                         const std::vector<std::string>& wanted);

// A module's bytes, decompressed if it is .ko.xz, .ko.zst or .ko.gz
// (busybox's insmod takes plain ELF only).
std::string module_bytes(const std::filesystem::path& file);

}  // namespace nvj::cli
