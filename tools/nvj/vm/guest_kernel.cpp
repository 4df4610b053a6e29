// SPDX-License-Identifier: BSD-3-Clause
#include "tools/nvj/vm/guest_kernel.h"

#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>

#include "common/command_line.h"
#include "tools/nvj/host/process.h"
#include "tools/nvj/host/text_file.h"
#include "tools/nvj/host/text_pattern.h"

namespace nvj::cli {
namespace fs = std::filesystem;
namespace {

// Module names treat '-' and '_' alike; file names use either.
std::string module_name(const fs::path& file) {
  std::string name = file.filename().string();
  name = name.substr(0, name.find(".ko"));
  for (char& c : name)
    if (c == '-') c = '_';
  return name;
}

std::string normalized(std::string name) {
  for (char& c : name)
    if (c == '-') c = '_';
  return name;
}

// The version the kernel package depends on: "linux-image-6.1.0-56-amd64
// (= 6.1.192-2)" names the image package. "" without dpkg or the package.
std::string packaged_version() {
  try {
    const RunResult r = run({"dpkg-query", "-W", "-f=${Depends}", kKernelPackage});
    if (r.status != 0) return "";
    if (const auto m = TextPattern(R"(linux-image-([0-9][^ ,|()]*))").search(r.output)) return m->groups[1];
  } catch (const std::runtime_error&) {
    // No dpkg-query: not a Debian system; the newest kernel in /boot will do.
  }
  return "";
}

}  // namespace

std::optional<GuestKernel> find_distribution_kernel(const fs::path& boot, const fs::path& modules_root) {
  std::vector<GuestKernel> found;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(boot, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("vmlinuz-", 0) != 0) continue;
    const std::string version = name.substr(8);
    if (fs::is_directory(modules_root / version)) found.push_back({entry.path(), version, modules_root / version});
  }
  if (found.empty()) return std::nullopt;
  if (const std::string wanted = packaged_version(); !wanted.empty())
    for (const auto& k : found)
      if (k.version == wanted) return k;
  const auto newest = std::max_element(found.begin(), found.end(), [](const GuestKernel& a, const GuestKernel& b) {
    return ::strverscmp(a.version.c_str(), b.version.c_str()) < 0;
  });
  return *newest;
}

std::string bzimage_version(const fs::path& image) {
  std::ifstream in(image, std::ios::binary);
  char header[0x210] = {};
  if (!in.read(header, sizeof header) || std::memcmp(header + 0x202, "HdrS", 4) != 0) return "";
  // Boot protocol: kernel_version at 0x20e points at a NUL-terminated
  // string, 0x200 bytes before where it says.
  const auto offset = static_cast<unsigned>(static_cast<unsigned char>(header[0x20e]) |
                                            static_cast<unsigned char>(header[0x20f]) << 8);
  if (offset == 0) return "";
  char text[256] = {};
  in.seekg(0x200 + offset);
  in.read(text, sizeof text - 1);
  std::string version(text);
  return version.substr(0, version.find(' '));
}

GuestKernel given_kernel(const fs::path& image, const fs::path& modules) {
  if (!fs::is_regular_file(image)) throw std::runtime_error("--kernel " + image.string() + ": no such file");
  if (::access(image.c_str(), R_OK) != 0) throw std::runtime_error("--kernel " + image.string() + ": not readable");
  GuestKernel k{image, bzimage_version(image), modules};
  if (k.version.empty() && modules.empty())
    throw std::runtime_error("--kernel " + image.string() +
                             ": not a bzImage with a version in its header; give its modules with --modules DIR");
  if (k.modules.empty()) k.modules = fs::path("/lib/modules") / k.version;
  if (!fs::is_directory(k.modules))
    throw std::runtime_error("the modules of kernel " + (k.version.empty() ? image.string() : k.version) + ": " +
                             k.modules.string() + " is not a folder (give it with --modules DIR)");
  return k;
}

std::vector<GuestKernel> given_kernels(const std::vector<std::string>& lists, const std::string& command) {
  std::vector<std::string> files;
  for (const std::string& list : lists) {
    std::stringstream in(list);
    for (std::string f; std::getline(in, f, ',');) files.push_back(f);
    if (list.empty() || list.back() == ',') files.push_back("");
  }
  std::vector<GuestKernel> out;
  std::set<std::string> versions;
  for (const std::string& f : files) {
    if (f.empty()) throw UsageError(command + ": --kernel: an empty file name");
    try {
      out.push_back(given_kernel(f));
    } catch (const std::runtime_error& e) {
      throw UsageError(command + ": " + e.what());
    }
    if (!versions.insert(out.back().version).second)
      throw UsageError(command + ": --kernel: " + out.back().version + " is given twice");
  }
  return out;
}

std::vector<GuestModule> resolve_modules(const fs::path& modules_dir, const std::vector<std::string>& wanted) {
  // modules.dep: "kernel/fs/ext4/ext4.ko: kernel/lib/crc16.ko kernel/fs/mbcache.ko ..."
  std::map<std::string, std::pair<fs::path, std::vector<std::string>>> modules;
  {
    std::istringstream dep(read_text_file(modules_dir / "modules.dep"));
    std::string line;
    while (std::getline(dep, line)) {
      const std::size_t colon = line.find(':');
      if (colon == std::string::npos) continue;
      const fs::path file = line.substr(0, colon);
      std::vector<std::string> deps;
      std::istringstream rest(line.substr(colon + 1));
      for (std::string d; rest >> d;) deps.push_back(module_name(d));
      modules[module_name(file)] = {modules_dir / file, deps};
    }
  }
  std::set<std::string> builtin;
  {
    std::istringstream list(read_text_file(modules_dir / "modules.builtin"));
    for (std::string line; std::getline(list, line);)
      if (!line.empty()) builtin.insert(module_name(line));
  }
  std::vector<GuestModule> order;
  std::set<std::string> seen;
  // Depth first: a module's dependencies are loaded before it.
  const auto visit = [&](const auto& self, const std::string& name) -> void {
    if (!seen.insert(name).second) return;
    const auto it = modules.find(name);
    if (it == modules.end()) {
      if (builtin.count(name) != 0) return;
      throw std::runtime_error("kernel module " + name + " is neither in " + (modules_dir / "modules.dep").string() +
                               " nor built in (modules.builtin)");
    }
    for (auto d = it->second.second.rbegin(); d != it->second.second.rend(); ++d) self(self, *d);
    order.push_back({name, it->second.first});
  };
  for (const auto& w : wanted) visit(visit, normalized(w));
  return order;
}

std::string module_bytes(const fs::path& file) {
  const std::string ext = file.extension().string();
  if (ext == ".ko") {
    std::string bytes = read_text_file(file);
    if (bytes.empty()) throw std::runtime_error("cannot read " + file.string());
    return bytes;
  }
  const std::map<std::string, std::string> tools{{".xz", "xz"}, {".zst", "zstd"}, {".gz", "gzip"}};
  const auto tool = tools.find(ext);
  if (tool == tools.end()) throw std::runtime_error(file.string() + ": unknown module compression");
  const RunResult r = run({tool->second, "-dcq", file.string()});
  if (r.status != 0 || r.output.empty())
    throw std::runtime_error("cannot decompress " + file.string() + " with " + tool->second + " (exit " +
                             std::to_string(r.status) + ")");
  return r.output;
}

}  // namespace nvj::cli
