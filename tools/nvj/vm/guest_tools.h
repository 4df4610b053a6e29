// SPDX-License-Identifier: BSD-3-Clause
// The programs nvj vm needs on the host and in the guest: QEMU, a static
// busybox, the static nvj-workload, and the kernel. What is missing is
// installed from the distribution when nvj vm runs as root, and otherwise
// named with the command that installs it.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace nvj::cli {

inline constexpr const char* kQemuProgram = "qemu-system-x86_64";

struct GuestTools {
  std::string qemu;      // qemu-system-x86_64
  std::string busybox;   // static: the guest has no shared libraries
  std::string workload;  // nvj-workload, "" when there is no static one
  std::string workload_note;  // why it is left out, when it is
  // With the nbd transport: this host's nbd-client and the shared
  // libraries it loads (its program interpreter among them), each copied
  // into the initramfs at its path here; otherwise empty.
  std::vector<std::string> nbd_client_files;
};

// The package of the kernel's NBD client program.
inline constexpr const char* kNbdClientPackage = "nbd-client";

// The shared libraries `program` loads, its program interpreter included,
// as paths on this host (ldd's answer). Throws std::runtime_error naming a
// library that is not found.
std::vector<std::string> shared_libraries(const std::string& program);

// True if `path` is an ELF executable without a program interpreter
// (static, or static-pie), which runs in a guest with no shared libraries.
bool is_static_executable(const std::filesystem::path& path);

// nvj-workload: $NVJ_WORKLOAD, else the one in this build tree, else the one
// next to nvj, else in PATH; "" if none.
std::string default_workload_program();

// Finds the tools. The packages that are missing (qemu-system-x86,
// busybox-static, the kernel package when `need_kernel`, nbd-client when
// `need_nbd_client`) are installed with apt-get when running as root
// (saying so on stderr); otherwise throws std::runtime_error naming them
// and the command that installs them.
GuestTools find_guest_tools(bool need_kernel, bool need_nbd_client = false);

}  // namespace nvj::cli
