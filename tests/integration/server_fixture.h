// Test support: a real nbdkit with the nvjournal plugin in a temporary folder,
// and libnbd handles to it. Everything is stopped and removed by destructors,
// also when an assertion fails.
//
// Environment: NVJ_PLUGIN picks the plugin (default: this build tree's);
// NVJ_TEST_PRELOAD is preloaded into nbdkit (default: the ASan runtime in a
// sanitized build, nothing otherwise).
#pragma once

#include <libnbd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/json.h"
#include "tools/nvj/client/control_client.h"
#include "tools/nvj/host/server_process.h"

namespace nvj::test {

struct TempDir {
  std::filesystem::path path;
  TempDir() {
    std::string templ = (std::filesystem::temp_directory_path() / "nvj-it-XXXXXX").string();
    if (mkdtemp(templ.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path = templ;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  std::string file(const std::string& name) const { return (path / name).string(); }
};

inline void write_text(const std::filesystem::path& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

inline std::vector<std::string> server_env() {
  std::vector<std::string> env;
  const char* preload = std::getenv("NVJ_TEST_PRELOAD");
  if (preload == nullptr) preload = NVJ_TEST_PRELOAD_DEFAULT;
  if (*preload != '\0') {
    env.push_back(std::string("LD_PRELOAD=") + preload);
    // nbdkit itself is not built with ASan: only report errors, not its leaks.
    env.emplace_back("ASAN_OPTIONS=detect_leaks=0:abort_on_error=1");
  }
  return env;
}

inline std::unique_ptr<cli::ServerProcess> start_server(const std::filesystem::path& dir,
                                                        std::vector<std::string> params,
                                                        std::vector<std::string> nbdkit_args = {}) {
  return std::make_unique<cli::ServerProcess>(
      cli::ServerOptions{dir, std::move(params), "", server_env(), std::move(nbdkit_args), false});
}

using Handle = std::unique_ptr<nbd_handle, decltype(&nbd_close)>;

inline Handle connect(const cli::ServerProcess& server, const std::string& export_name) {
  Handle h(nbd_create(), &nbd_close);
  if (!h) throw std::runtime_error(nbd_get_error());
  nbd_add_meta_context(h.get(), LIBNBD_CONTEXT_BASE_ALLOCATION);
  if (nbd_connect_uri(h.get(), server.uri(export_name).c_str()) == -1)
    throw std::runtime_error(std::string("connect: ") + nbd_get_error());
  return h;
}

// A control API answer of 200, parsed (anything else throws, with the answer).
inline Json control_json(const std::string& socket, const std::string& method, const std::string& target) {
  return parse_json(cli::control_call(socket, method, target), method + " " + target);
}

}  // namespace nvj::test
