// SPDX-License-Identifier: BSD-3-Clause
#include "tools/nvj/testbed/testbed.h"

#include <sys/mount.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <stdexcept>
#include <thread>

#include "common/control_client.h"
#include "tools/nvj/host/devices/attach.h"
#include "tools/nvj/host/devices/detached_mount.h"
#include "tools/nvj/host/fs_tools/filesystem_tools.h"

namespace nvj::cli {
namespace fs = std::filesystem;

Testbed::Testbed(TestbedOptions options) : options_(std::move(options)) {
  fs::create_directories(options_.run_dir);
  control_ = (options_.run_dir / "control.sock").string();
  const auto step = [this](const std::string& what) {
    if (options_.on_step) options_.on_step(what);
  };
  try {
    auto params = options_.parameters;
    params.push_back("control=" + control_);
    step("starting nbdkit nvjournal " + quote(params));
    server_ = std::make_unique<ServerProcess>(ServerOptions{options_.run_dir / "server", params, "", {}, {}, false});
    teardown_.add("stop the server", [this] {
      if (const int status = server_->stop(); status != 0)
        throw std::runtime_error("nbdkit exited with status " + std::to_string(status) + ": " + server_->log());
    });
    exports_ = ServerAddress::parse(server_->socket()).list_exports();
    std::vector<std::string> names = options_.exports;
    if (names.empty())
      for (const auto& e : exports_) names.push_back(e.name);
    step("attaching its exports to this host");
    const fs::path state = options_.run_dir / "attach";
    teardown_.add("detach", [state] {
      if (fs::exists(state / "attach.log")) detach(state);
    });
    for (const auto& a : attach(AttachOptions{server_->socket(), state, names, AttachMethod::automatic, {}, true, {}})) {
      if (a.name == "data") data_device_ = a.device;
      if (a.name == "journal") journal_device_ = a.device;
    }
    if (data_device_.empty()) throw std::runtime_error("the server has no data export");
    mount_ = options_.run_dir / "mnt";
    fs::create_directories(mount_);
    if (options_.filesystem != "ext4" && options_.make_filesystem) {
      step("making " + options_.filesystem + " on " + data_device_ +
           (options_.filesystem != "xfs" ? ""
            : journal_device_.empty()    ? " (log inside)"
                                         : " (log on " + journal_device_ + ")"));
      make_filesystem(options_.filesystem, data_device_, journal_device_, options_.mkfs_options);
    }
    if (options_.before_mount) options_.before_mount(*this);
    step("mounting " +
         std::string(!options_.make_filesystem      ? "the " + options_.filesystem + " the exports hold"
                     : options_.filesystem == "ext4" ? "the ext4 the server built"
                                                     : options_.filesystem) +
         " on " + data_device_ +
         (options_.filesystem == "btrfs" ? ""
          : journal_device_.empty()      ? (options_.filesystem == "xfs" ? " (log inside)" : " (journal inside)")
          : options_.filesystem == "xfs" ? " (log on " + journal_device_ + ")"
                                         : " (journal on " + journal_device_ + ")") +
         (options_.mount_options.empty() ? "" : " with " + options_.mount_options));
    mount();
    teardown_.add("unmount " + mount_.string(), [this] {
      if (mounted_) unmount();
    });
  } catch (...) {
    teardown_.run();
    throw;
  }
}

Testbed::~Testbed() { teardown_.run(); }

std::string Testbed::get(const std::string& target) const {
  return control_call(control_, "GET", target);
}

void Testbed::post(const std::string& target) const {
  control_call(control_, "POST", target);
}

void Testbed::mount() {
  if (mounted_) return;
  const std::string opts = mount_data(options_.filesystem, options_.mount_options, journal_device_);
  if (::mount(data_device_.c_str(), mount_.c_str(), options_.filesystem.c_str(), 0, opts.c_str()) != 0)
    throw std::runtime_error("mount " + data_device_ + " -o " + opts + ": " + std::strerror(errno));
  mounted_ = true;
}

void Testbed::unmount() {
  if (!mounted_) return;
  // Busy: a workload's processes that were just killed may still hold
  // files open for a moment. Wait for them (up to 5 s), never detach lazily:
  // that would leave the filesystem, and the loop device under it, alive
  // out of sight.
  for (int tries = 0; ::umount2(mount_.c_str(), 0) != 0; ++tries) {
    const int error = errno;
    if (error != EBUSY || tries == 50)
      throw std::runtime_error("umount " + mount_.string() + ": " + std::strerror(error) +
                               (error == EBUSY ? " (still in use after 5 s: see fuser -vm " + mount_.string() + ")" : ""));
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  mounted_ = false;
  // Unmounted here is not unmounted: a mount namespace another process
  // made meanwhile keeps the filesystem alive, its last writes unsent.
  std::vector<std::string> devices{data_device_};
  if (!journal_device_.empty()) devices.push_back(journal_device_);
  wait_until_released(devices, 10000);
}

RunResult Testbed::check() const {
  if (mounted_) throw std::logic_error("e2fsck of a mounted filesystem: unmount first");
  return run(fsck_command(options_.filesystem, data_device_, journal_device_));
}

bool Testbed::teardown() { return teardown_.run(); }

}  // namespace nvj::cli
