// SPDX-License-Identifier: BSD-3-Clause
#include "tools/nvj/vm/guest_kernel.h"

#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>

#include "common/command_line.h"
#include "tools/nvj/host/files/text_file.h"
#include "tools/nvj/host/files/text_pattern.h"
#include "tools/nvj/host/processes/process.h"
#include "tools/nvj/vm/debian_archive.h"
#include "tools/nvj/vm/kernel_name.h"

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

// The installed package a file came from, with its version; none when
// dpkg does not know the file (a kernel built here).
std::vector<KernelPackage> package_of(const fs::path& file) {
  try {
    const RunResult owner = run({"dpkg-query", "-S", fs::absolute(file).string()});
    const std::size_t colon = owner.output.find(':');
    if (owner.status != 0 || colon == std::string::npos) return {};
    const std::string package = owner.output.substr(0, colon);
    const RunResult version = run({"dpkg-query", "-W", "-f=${Version}", package});
    if (version.status != 0 || version.output.empty()) return {};
    return {KernelPackage{package, version.output, "", 0}};
  } catch (const std::runtime_error&) {
    return {};  // no dpkg-query: not a Debian host
  }
}

GuestKernel kernel_at(const fs::path& image, const std::string& version, const fs::path& modules) {
  GuestKernel k;
  k.image = image;
  k.version = version;
  k.modules = modules;
  return k;
}

}  // namespace

std::optional<GuestKernel> find_distribution_kernel(const fs::path& boot, const fs::path& modules_root) {
  std::vector<GuestKernel> found;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(boot, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("vmlinuz-", 0) != 0) continue;
    const std::string version = name.substr(8);
    if (fs::is_directory(modules_root / version)) found.push_back(kernel_at(entry.path(), version, modules_root / version));
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
  GuestKernel k = kernel_at(image, bzimage_version(image), modules);
  if (k.version.empty() && modules.empty())
    throw std::runtime_error("--kernel " + image.string() +
                             ": not a bzImage with a version in its header; give its modules with --modules DIR");
  if (k.modules.empty()) k.modules = fs::path("/lib/modules") / k.version;
  if (!fs::is_directory(k.modules))
    throw std::runtime_error("the modules of kernel " + (k.version.empty() ? image.string() : k.version) + ": " +
                             k.modules.string() + " is not a folder (give it with --modules DIR)");
  return k;
}

GuestKernel kernel_in_folder(const fs::path& dir) {
  fs::path image;
  std::error_code ec;
  for (const char* candidate : {"arch/x86/boot/bzImage", "bzImage", "vmlinuz"})
    if (fs::is_regular_file(dir / candidate)) {
      image = dir / candidate;
      break;
    }
  if (image.empty())
    for (const auto& e : fs::directory_iterator(dir / "boot", ec))
      if (e.path().filename().string().rfind("vmlinuz-", 0) == 0) image = e.path();
  if (image.empty())
    throw std::runtime_error("--kernel " + dir.string() +
                             ": no kernel in the folder (arch/x86/boot/bzImage, bzImage, vmlinuz or boot/vmlinuz-*)");
  GuestKernel k = kernel_at(image, bzimage_version(image), {});
  if (k.version.empty()) throw std::runtime_error("--kernel " + dir.string() + ": " + image.string() + " is not a bzImage with a version in its header");
  for (const char* modules : {"lib/modules", "usr/lib/modules"})
    if (fs::is_directory(dir / modules / k.version)) {
      k.modules = dir / modules / k.version;
      if (!fs::exists(k.modules / "modules.dep"))
        throw std::runtime_error("--kernel " + dir.string() + ": " + k.modules.string() + " has no modules.dep (run depmod -b " +
                                 dir.string() + " " + k.version + ")");
      break;
    }
  return k;
}

GuestKernel named_kernel(const std::string& text, const std::string& modules, const std::string& command, bool refresh) {
  KernelName name;
  try {
    name = parse_kernel_name(text);
  } catch (const std::invalid_argument& e) {
    throw UsageError(command + ": --kernel " + e.what());
  }
  GuestKernel k;
  if (name.kind == KernelName::Kind::path) {
    // A file or folder that holds no kernel names none: a usage error, as
    // a Debian name that names none is.
    if (fs::is_directory(name.path) && !modules.empty())
      throw UsageError(command + ": --modules goes with a kernel's file, not a folder (" + name.path + ")");
    try {
      k = fs::is_directory(name.path) ? kernel_in_folder(name.path) : given_kernel(name.path, modules);
    } catch (const std::runtime_error& e) {
      throw UsageError(command + ": " + e.what());
    }
  } else {
    if (!modules.empty()) throw UsageError(command + ": --modules goes with a kernel's file, not " + text + " (whose modules come with it)");
    CachedKernel c;
    try {
      c = KernelCache().fetch(name, {refresh, [](const std::string& what) { std::fprintf(stderr, "nvj: %s\n", what.c_str()); }});
    } catch (const ArchiveError& e) {
      if (e.kind() == ArchiveError::Kind::other) throw std::runtime_error("--kernel " + text + ": " + e.what());
      throw UsageError(command + ": --kernel " + text + ": " + e.what());
    }
    k = kernel_at(c.image, c.version, c.modules);
    k.packages = c.packages;
    k.suite = c.suite;
    k.image_sha256 = c.image_sha256;
  }
  k.name = text;
  if (k.image_sha256.empty()) k.image_sha256 = file_sha256(k.image);
  if (k.packages.empty()) k.packages = package_of(k.image);
  return k;
}

std::vector<GuestKernel> named_kernels(const std::vector<std::string>& lists, const std::string& command) {
  std::vector<KernelName> names;
  try {
    names = parse_kernel_names(lists);  // every name checked before any is fetched
  } catch (const std::invalid_argument& e) {
    throw UsageError(command + ": --kernel: " + e.what());
  }
  std::vector<GuestKernel> out;
  std::set<std::string> versions;
  for (const KernelName& n : names) {
    out.push_back(named_kernel(n.text, "", command));
    if (!versions.insert(out.back().version).second)
      throw UsageError(command + ": --kernel: " + out.back().version + " is given twice");
  }
  return out;
}

GuestKernel distribution_kernel(const std::string& command) {
  auto k = find_distribution_kernel();
  if (!k)
    throw std::runtime_error(command + ": no kernel with modules in /boot and /lib/modules: install " + kKernelPackage +
                             " (apt-get install " + kKernelPackage + ") or give one with --kernel");
  k->image_sha256 = file_sha256(k->image);
  k->name = kKernelPackage;
  k->packages = package_of(k->image);
  return *k;
}

Json guest_kernel_json(const GuestKernel& k) {
  Json packages = Json::array();
  for (const KernelPackage& p : k.packages)
    packages.push_back(Json{{"name", p.name}, {"version", p.version}, {"sha256", p.sha256.empty() ? Json(nullptr) : Json(p.sha256)}});
  return Json{{"name", k.name},
              {"version", k.version},
              {"image", k.image.string()},
              {"image_sha256", k.image_sha256},
              {"packages", packages},
              {"suite", k.suite.empty() ? Json(nullptr) : Json(k.suite)}};
}

std::string reproducible_name(const GuestKernel& k) {
  if (!k.suite.empty() && !k.packages.empty())
    return std::string(kDebianPrefix) + k.packages.front().name + "=" + k.packages.front().version;
  // The distribution's kernel (no --kernel) is named by its package, which
  // --kernel would read as a file: its image names it.
  return k.name.empty() || k.name == kKernelPackage ? k.image.string() : k.name;
}

std::string kernel_label(const Json& k) {
  std::string package;
  for (const Json& p : k.at("packages")) {
    const std::string name = p.at("name").get<std::string>();
    if (name.rfind("linux-binary-", 0) == 0 ||
        (package.empty() && name.rfind("linux-image-", 0) == 0 && name != kKernelPackage))
      package = name + " " + p.at("version").get<std::string>();
  }
  const std::string sha = k.at("image_sha256").get<std::string>();
  return k.at("name").get<std::string>() + (package.empty() ? "" : ": " + package) +
         (sha.empty() ? "" : ", sha256 " + sha.substr(0, 12));
}

std::string describe_kernel(const GuestKernel& k) { return k.version + " (" + kernel_label(guest_kernel_json(k)) + ")"; }

std::vector<GuestModule> resolve_modules(const fs::path& modules_dir, const std::vector<std::string>& wanted) {
  if (modules_dir.empty()) return {};
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
  // modules.softdep: "softdep ext4 pre: crypto-crc32c" (6.1's ext4 finds
  // crc32c through the crypto API, which asks modprobe: the guest has none).
  std::map<std::string, std::vector<std::string>> soft;
  {
    std::istringstream list(read_text_file(modules_dir / "modules.softdep"));
    for (std::string line; std::getline(list, line);) {
      std::istringstream words(line);
      std::string keyword, module, word;
      if (!(words >> keyword >> module) || keyword != "softdep") continue;
      bool pre = false;
      while (words >> word) {
        if (word == "pre:" || word == "post:") pre = word == "pre:";
        else if (pre) soft[normalized(module)].push_back(word);
      }
    }
  }
  // modules.alias: "alias crypto-crc32c crc32c_generic", in the kernel's order.
  std::map<std::string, std::vector<std::string>> aliases;
  {
    std::istringstream list(read_text_file(modules_dir / "modules.alias"));
    for (std::string line; std::getline(list, line);) {
      std::istringstream words(line);
      std::string keyword, alias, module;
      if (words >> keyword >> alias >> module && keyword == "alias") aliases[alias].push_back(normalized(module));
    }
  }
  // The module a soft dependency names: itself, else of the modules its
  // alias names the generic one (crc32c_generic, not crc32c_intel, which
  // needs SSE4.2), else the first; "" when it is built in or nowhere.
  const auto provider = [&](const std::string& wanted_name) -> std::string {
    const std::string n = normalized(wanted_name);
    if (modules.count(n) != 0) return n;
    const auto it = aliases.find(wanted_name);
    if (it == aliases.end()) return "";
    std::string first;
    for (const std::string& m : it->second) {
      if (builtin.count(m) != 0) return "";
      if (modules.count(m) == 0) continue;
      if (m.size() > 8 && m.compare(m.size() - 8, 8, "_generic") == 0) return m;
      if (first.empty()) first = m;
    }
    return first;
  };
  std::vector<GuestModule> order;
  std::map<std::string, std::size_t> seen;  // the module's place in `order` once it has one
  // Depth first: a module's dependencies, hard then soft, are loaded before it.
  const auto visit = [&](const auto& self, const std::string& name, bool optional) -> void {
    if (const auto at = seen.find(name); at != seen.end()) {
      if (!optional && at->second < order.size()) order[at->second].optional = false;  // needed after all
      return;
    }
    seen[name] = SIZE_MAX;
    const auto it = modules.find(name);
    if (it == modules.end()) {
      if (builtin.count(name) != 0 || optional) return;
      throw std::runtime_error("kernel module " + name + " is neither in " + (modules_dir / "modules.dep").string() +
                               " nor built in (modules.builtin)");
    }
    for (auto d = it->second.second.rbegin(); d != it->second.second.rend(); ++d) self(self, *d, optional);
    if (const auto s = soft.find(name); s != soft.end())
      for (const std::string& want : s->second)
        if (const std::string p = provider(want); !p.empty()) self(self, p, true);
    seen[name] = order.size();
    order.push_back({name, it->second.first, optional});
  };
  for (const auto& w : wanted) visit(visit, normalized(w), false);
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
