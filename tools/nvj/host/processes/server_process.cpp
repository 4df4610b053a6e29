// SPDX-License-Identifier: BSD-3-Clause
#include "tools/nvj/host/processes/server_process.h"

#include <signal.h>

#include <chrono>
#include <cstdlib>
#include <stdexcept>
#include <thread>

#include "tools/nvj/host/files/text_file.h"
#include "tools/nvj/host/processes/process.h"

namespace nvj::cli {
namespace fs = std::filesystem;

std::string ServerProcess::default_plugin() {
  if (const char* env = std::getenv("NVJ_PLUGIN"); env != nullptr && *env != '\0') return env;
  if (fs::exists(NVJ_BUILD_PLUGIN)) return NVJ_BUILD_PLUGIN;
  return "nvjournal";
}

ServerProcess::ServerProcess(ServerOptions options) : options_(std::move(options)) {
  fs::create_directories(options_.run_dir);
  const fs::path pidfile = options_.run_dir / "nbdkit.pid";
  fs::remove(pidfile);
  fs::remove(socket());
  std::vector<std::string> argv{"nbdkit", "--foreground", "--exit-with-parent", "-U", socket(), "-P", pidfile.string()};
  if (options_.verbose) argv.emplace_back("-v");
  argv.insert(argv.end(), options_.nbdkit_args.begin(), options_.nbdkit_args.end());
  argv.push_back(options_.plugin.empty() ? default_plugin() : options_.plugin);
  argv.insert(argv.end(), options_.parameters.begin(), options_.parameters.end());
  // Its own session: a Ctrl-C in the terminal reaches nvj, which then tears
  // down in order, not the server under a mounted filesystem.
  pid_ = spawn(argv, SpawnOptions{(options_.run_dir / "nbdkit.log").string(), true, options_.env, {}});

  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!fs::exists(pidfile)) {
    if (!alive(pid_)) {
      pid_ = -1;
      throw std::runtime_error("nbdkit did not start: " + log());
    }
    if (std::chrono::steady_clock::now() > deadline) {
      stop();
      throw std::runtime_error("nbdkit was not serving after 30 s: " + log());
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

ServerProcess::~ServerProcess() { stop(); }

int ServerProcess::stop() {
  if (pid_ <= 0) return -1;
  const int status = cli::stop(pid_, std::chrono::seconds(10));
  pid_ = -1;
  return status;
}

void ServerProcess::kill_hard() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGKILL);
  wait_for(pid_);
  pid_ = -1;
}

std::string ServerProcess::uri(const std::string& export_name) const {
  return "nbd+unix:///" + export_name + "?socket=" + socket();
}

std::string ServerProcess::log() const {
  std::string text = read_text_file(options_.run_dir / "nbdkit.log");
  while (!text.empty() && text.back() == '\n') text.pop_back();
  return text;
}

}  // namespace nvj::cli
