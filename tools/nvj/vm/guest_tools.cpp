// SPDX-License-Identifier: BSD-3-Clause
#include "tools/nvj/vm/guest_tools.h"

#include <elf.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <stdexcept>

#include "tools/nvj/host/processes/process.h"
#include "tools/nvj/vm/guest_kernel.h"

namespace nvj::cli {
namespace fs = std::filesystem;
namespace {

std::string static_busybox() {
  const std::string path = which("busybox");
  return !path.empty() && is_static_executable(path) ? path : "";
}

// nbd-client lives in sbin, which a user's PATH may not have.
std::string nbd_client_program() {
  if (std::string path = which("nbd-client"); !path.empty()) return path;
  for (const char* path : {"/usr/sbin/nbd-client", "/sbin/nbd-client"})
    if (::access(path, X_OK) == 0) return path;
  return "";
}

std::vector<std::string> missing_packages(bool need_kernel, bool need_nbd_client) {
  std::vector<std::string> missing;
  if (which(kQemuProgram).empty()) missing.emplace_back("qemu-system-x86");
  if (static_busybox().empty()) missing.emplace_back("busybox-static");
  if (need_kernel && !find_distribution_kernel()) missing.emplace_back(kKernelPackage);
  if (need_nbd_client && nbd_client_program().empty()) missing.emplace_back(kNbdClientPackage);
  return missing;
}

std::string joined(const std::vector<std::string>& words) {
  std::string out;
  for (const auto& w : words) out += (out.empty() ? "" : " ") + w;
  return out;
}

void install(const std::vector<std::string>& packages) {
  std::fprintf(stderr, "nvj vm: installing %s (apt-get install -y %s)\n", joined(packages).c_str(),
               joined(packages).c_str());
  const std::vector<std::string> env{"DEBIAN_FRONTEND=noninteractive"};
  // A fresh system may have no package lists yet.
  run({"apt-get", "update", "-qq"}, env);
  std::vector<std::string> argv{"apt-get", "install", "-y", "-qq", "--no-install-recommends"};
  argv.insert(argv.end(), packages.begin(), packages.end());
  const RunResult r = run(argv, env);
  if (r.status != 0)
    throw std::runtime_error("apt-get install " + joined(packages) + " failed (exit " + std::to_string(r.status) +
                             "): " + r.output);
}

}  // namespace

bool is_static_executable(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  Elf64_Ehdr eh{};
  if (!in.read(reinterpret_cast<char*>(&eh), sizeof eh) || std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
      eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_phentsize != sizeof(Elf64_Phdr))
    return false;
  for (unsigned i = 0; i < eh.e_phnum; ++i) {
    Elf64_Phdr ph{};
    in.seekg(static_cast<std::streamoff>(eh.e_phoff + i * sizeof ph));
    if (!in.read(reinterpret_cast<char*>(&ph), sizeof ph)) return false;
    if (ph.p_type == PT_INTERP) return false;  // needs a dynamic loader
  }
  return true;
}

std::string default_workload_program() {
  if (const char* env = std::getenv("NVJ_WORKLOAD"); env != nullptr && *env != '\0') return env;
  if (fs::exists(NVJ_BUILD_WORKLOAD)) return NVJ_BUILD_WORKLOAD;
  std::error_code ec;
  const fs::path beside = fs::read_symlink("/proc/self/exe", ec).parent_path() / "nvj-workload";
  if (!ec && fs::exists(beside)) return beside.string();
  return which("nvj-workload");
}

std::vector<std::string> shared_libraries(const std::string& program) {
  const RunResult r = run({"ldd", program});
  // A static program: "not a dynamic executable", exit 1.
  if (r.status != 0 && r.output.find("not a dynamic executable") != std::string::npos) return {};
  if (r.status != 0)
    throw std::runtime_error("ldd " + program + " failed (exit " + std::to_string(r.status) + "): " + r.output);
  // "\tlibc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x...)", the
  // interpreter "\t/lib64/ld-linux-x86-64.so.2 (0x...)", the vDSO without a path.
  std::vector<std::string> libraries;
  std::size_t start = 0;
  while (start < r.output.size()) {
    std::size_t end = r.output.find('\n', start);
    if (end == std::string::npos) end = r.output.size();
    std::string line = r.output.substr(start, end - start);
    start = end + 1;
    line.erase(0, std::min(line.size(), line.find_first_not_of(" \t")));
    const std::size_t arrow = line.find("=> ");
    std::string path = arrow != std::string::npos ? line.substr(arrow + 3) : line;
    if (path.rfind("not found", 0) == 0)
      throw std::runtime_error(program + " needs " + line.substr(0, line.find(' ')) + ", which is not found (ldd)");
    path = path.substr(0, path.find(" ("));
    if (path.empty() || path.front() != '/') continue;  // the vDSO
    libraries.push_back(path);
  }
  return libraries;
}

GuestTools find_guest_tools(bool need_kernel, bool need_nbd_client) {
  if (const auto missing = missing_packages(need_kernel, need_nbd_client); !missing.empty()) {
    if (::geteuid() != 0 || which("apt-get").empty())
      throw std::runtime_error("not installed: " + joined(missing) + "; install with: apt-get install " +
                               joined(missing) + " (as root; run as root, nvj vm installs them itself)");
    install(missing);
    if (const auto still = missing_packages(need_kernel, need_nbd_client); !still.empty())
      throw std::runtime_error("still missing after apt-get install: " + joined(still));
  }
  GuestTools tools{which(kQemuProgram), static_busybox(), default_workload_program(), "", {}};
  if (need_nbd_client) {
    const std::string program = nbd_client_program();
    tools.nbd_client_files = shared_libraries(program);
    tools.nbd_client_files.insert(tools.nbd_client_files.begin(), program);
  }
  if (tools.workload.empty()) {
    tools.workload_note = "nvj-workload was not found (set NVJ_WORKLOAD)";
  } else if (!is_static_executable(tools.workload)) {
    tools.workload_note = tools.workload + " is not statically linked (a sanitized build?)";
    tools.workload.clear();
  }
  return tools;
}

}  // namespace nvj::cli
