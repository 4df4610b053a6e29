// SPDX-License-Identifier: BSD-3-Clause
// Testbed: one nvjournal server attached to this host and its filesystem
// mounted, for as long as the object lives: start nbdkit with the given
// parameters (and a control socket), attach the exports, mount the ext4 the
// server built, or make an XFS (its log on the journal export) or a btrfs
// (on the data export alone) on the attached exports and mount that. Torn
// down newest first (unmount, detach, stop) by teardown(), by the
// destructor, and after a failure half-way through. Used by nvj demo, nvj
// experiment and nvj crash run.
#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "tools/nvj/client/server_address.h"
#include "tools/nvj/host/processes/process.h"
#include "tools/nvj/host/processes/server_process.h"
#include "tools/nvj/host/processes/teardown.h"

namespace nvj::cli {

struct TestbedOptions {
  std::filesystem::path run_dir;        // created; the server's files, the mount point
  std::vector<std::string> parameters;  // the plugin's; control= is added
  std::string mount_options;            // "data=journal"; journal_path= (ext4) or logdev= (xfs) is added
  // Called before each phase with what it is about to do ("attaching its
  // exports to this host"); may throw to give up (the lab is undone).
  std::function<void(const std::string&)> on_step;
  // ext4: the one the server built (its parameters say how). xfs, btrfs:
  // made here by mkfs.xfs -l logdev=JOURNAL or mkfs.btrfs on the exports
  // as they are (give the server fs=none: mkfs refuses a disk that holds a
  // filesystem already, and the Testbed never forces it).
  std::string filesystem = "ext4";
  // Called once the filesystem is made (synced to the server), before it is
  // mounted (nvj crash run starts its recording there).
  std::function<void(const class Testbed&)> before_mount = nullptr;
  // The exports attached (empty: every one the server has). {"data"} for
  // an XFS with its log inside, or a btrfs that leaves the journal export
  // alone.
  std::vector<std::string> exports{};
  // Options for mkfs (xfs, btrfs), before the device: {"--mixed"}.
  std::vector<std::string> mkfs_options{};
  // xfs, btrfs: false mounts what the exports hold already (a crash state
  // served from its images) instead of making the filesystem.
  bool make_filesystem = true;
};

class Testbed {
 public:
  explicit Testbed(TestbedOptions options);  // throws, having undone what it did
  ~Testbed();
  Testbed(const Testbed&) = delete;
  Testbed& operator=(const Testbed&) = delete;

  const std::filesystem::path& mount_point() const { return mount_; }
  const std::string& data_device() const { return data_device_; }
  const std::string& journal_device() const { return journal_device_; }  // "" with an internal journal
  const std::string& control() const { return control_; }
  const std::vector<ExportInfo>& exports() const { return exports_; }
  const ServerProcess& server() const { return *server_; }

  // The control API; throws unless it answers 200.
  std::string get(const std::string& target) const;
  void post(const std::string& target) const;

  void unmount();   // throws if the kernel refuses
  void mount();     // again, after unmount(), with the same options
  // The filesystem's own checker, read-only, after unmount(): e2fsck -fn
  // (with its external journal), xfs_repair -n (with its log), btrfs check
  // --readonly.
  RunResult check() const;
  bool teardown();  // false if a step failed (each step says why on stderr)

 private:
  TestbedOptions options_;
  std::string control_;
  std::unique_ptr<ServerProcess> server_;
  std::vector<ExportInfo> exports_;
  std::string data_device_, journal_device_;
  std::filesystem::path mount_;
  bool mounted_ = false;
  Teardown teardown_;
};

}  // namespace nvj::cli
