// SPDX-License-Identifier: BSD-3-Clause
// ServerProcess: an nbdkit running the nvjournal plugin on a Unix socket,
// started and stopped by PID. Used by `nvj demo` and by the tests.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <string>
#include <vector>

namespace nvj::cli {

struct ServerOptions {
  std::filesystem::path run_dir;        // socket, pid file and log go here
  std::vector<std::string> parameters;  // key=value for the plugin
  std::string plugin;                   // "" = default_plugin()
  std::vector<std::string> env;         // NAME=VALUE replacing ours (LD_PRELOAD for ASan)
  std::vector<std::string> nbdkit_args; // before the plugin: --filter=cow, ...
  bool verbose = false;                 // nbdkit -v
};

class ServerProcess {
 public:
  // The plugin to load: $NVJ_PLUGIN, else the one in this build tree, else
  // the installed "nvjournal".
  static std::string default_plugin();

  // Starts nbdkit and waits until it serves; throws with nbdkit's own error
  // output if it exits instead.
  explicit ServerProcess(ServerOptions options);
  ~ServerProcess();
  ServerProcess(const ServerProcess&) = delete;
  ServerProcess& operator=(const ServerProcess&) = delete;

  // SIGTERM and wait: nbdkit finishes its requests and exits. Returns its
  // exit status (0 for a clean exit), -1 if it was not running.
  int stop();
  // SIGKILL: the process dies at once, as in a crash of the server.
  void kill_hard();

  pid_t pid() const { return pid_; }
  std::string socket() const { return (options_.run_dir / "nbdkit.sock").string(); }
  std::string uri(const std::string& export_name) const;
  std::string log() const;

 private:
  ServerOptions options_;
  pid_t pid_ = -1;
};

}  // namespace nvj::cli
