// SPDX-License-Identifier: BSD-3-Clause
// nvj kernel: the guests' kernels. fetch resolves --kernel names as nvj vm
// does (a Debian kernel is fetched into the cache: tools/nvj/vm/kernel_cache.h)
// and says what each is; list shows the cache; remove empties it.
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "common/command_line.h"
#include "common/json.h"
#include "tools/nvj/commands.h"
#include "tools/nvj/vm/guest_kernel.h"
#include "tools/nvj/vm/kernel_cache.h"

namespace nvj::cli {
namespace {

constexpr const char* kKernelText = R"(The kernels nvj vm, nvj crash run --vm and nvj crash explore --vm boot.
A --kernel value is a bzImage, a folder a kernel was built in, or a Debian
kernel by name: debian:SUITE (the kernel the suite's linux-image-amd64 is
today: bookworm, trixie, sid, experimental, ...) or
debian:PACKAGE[=VERSION]. Debian's kernels are fetched with an apt of our
own into a cache ($NVJ_KERNEL_CACHE, else /var/cache/nvjournal as root,
else ~/.cache/nvjournal), never installed, and reused.
)";

struct KernelArgs {
  std::vector<std::string> names;
  std::vector<std::string> which;
  bool refresh = false;
  bool json = false;
};

void print_kernel(const GuestKernel& k) {
  std::printf("%s: %s\n", k.name.c_str(), k.version.c_str());
  std::printf("  image    %s\n  sha256   %s\n", k.image.c_str(), k.image_sha256.c_str());
  std::printf("  modules  %s\n", k.modules.empty() ? "none (every driver built in)" : k.modules.c_str());
  for (const KernelPackage& p : k.packages)
    std::printf("  package  %s %s%s\n", p.name.c_str(), p.version.c_str(),
                p.sha256.empty() ? "" : ("  sha256 " + p.sha256).c_str());
  if (!k.suite.empty()) std::printf("  suite    %s; again: --kernel %s\n", k.suite.c_str(), reproducible_name(k).c_str());
}

int fetch_main(const KernelArgs& a) {
  if (a.names.empty()) throw UsageError("nvj kernel fetch: which kernel? (debian:sid, debian:PACKAGE=VERSION, a file or a folder)");
  Json out = Json::array();
  std::vector<KernelName> names;
  try {
    names = parse_kernel_names(a.names);
  } catch (const std::invalid_argument& e) {
    throw UsageError(std::string("nvj kernel fetch: ") + e.what());
  }
  for (const KernelName& n : names) {
    const GuestKernel k = named_kernel(n.text, "", "nvj kernel fetch", a.refresh);
    if (a.json)
      out.push_back(guest_kernel_json(k));
    else
      print_kernel(k);
  }
  if (a.json) std::printf("%s\n", to_json_text(out, 2).c_str());
  return 0;
}

int list_main(const KernelArgs& a) {
  const KernelCache cache;
  const std::vector<CachedKernel> kernels = cache.list();
  if (a.json) {
    Json out = Json::array();
    for (const CachedKernel& k : kernels) {
      Json j = cached_kernel_json(k);
      j["folder"] = k.folder.string();
      out.push_back(j);
    }
    std::printf("%s\n", to_json_text(out, 2).c_str());
    return 0;
  }
  if (kernels.empty()) std::printf("no kernels in %s\n", cache.root().c_str());
  for (const CachedKernel& k : kernels)
    std::printf("%-28s %-10s %s  %s\n", k.version.c_str(), k.suite.c_str(), k.fetched.c_str(), k.key.c_str());
  return 0;
}

int remove_main(const KernelArgs& a) {
  if (a.which.empty()) throw UsageError("nvj kernel remove: which kernel? (a release, a package version or a folder's name: nvj kernel list)");
  KernelCache cache;
  int status = 0;
  for (const std::string& w : a.which) {
    const std::size_t n = cache.remove(w);
    if (n == 0) {
      std::fprintf(stderr, "nvj kernel remove: no kernel %s in %s\n", w.c_str(), cache.root().c_str());
      status = 1;
    } else {
      std::printf("removed %zu kernel%s: %s\n", n, n == 1 ? "" : "s", w.c_str());
    }
  }
  return status;
}

}  // namespace

CommandRun declare_kernel(Command& app) {
  auto a = std::make_shared<KernelArgs>();
  app.describe(kKernelText);
  app.require_subcommands(1, 1);
  Command fetch = app.subcommand("fetch", "resolve kernel names (fetching Debian's into the cache) and say what each is");
  fetch.add("NAME", a->names, "debian:SUITE, debian:PACKAGE[=VERSION], a bzImage or a folder").value_name("NAME");
  fetch.flag("--refresh", a->refresh, "bring the suites' package lists up to date first (default: when a day old)");
  fetch.flag("--json", a->json, "one JSON array");
  Command list = app.subcommand("list", "the kernels in the cache");
  list.flag("--json", a->json, "one JSON array");
  Command remove = app.subcommand("remove", "remove kernels from the cache");
  remove.add("WHICH", a->which, "a release (uname -r), a package version or a folder's name").value_name("WHICH");
  return [a, fetch, list] {
    if (fetch.parsed()) return fetch_main(*a);
    if (list.parsed()) return list_main(*a);
    return remove_main(*a);
  };
}

}  // namespace nvj::cli
