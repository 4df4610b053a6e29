// SPDX-License-Identifier: BSD-3-Clause
// The crash lab's ground truth: a crash state written to sparse files,
// bound to loop devices, mounted by this host's kernel (which replays the
// journal or log as after a real power cut), every fact read back through
// the mount, unmounted, then the filesystem's own checker on what the
// kernel left (e2fsck -fn, xfs_repair -n, btrfs check --readonly:
// host/fs_tools/filesystem_tools.h). What the fast path (crashlab/judge/fast_path.h)
// decides in process for ext4, this decides with the real kernel and
// e2fsprogs, and the two must agree; for XFS and btrfs, which the fast path
// does not read, it alone decides.
//
// The files and loop devices are made once and reused for every state: the
// files are emptied (holes punched) and the state written into them, the
// loop devices' caches dropped. Each state is a detached mount
// (host/devices/detached_mount.h), attached to no mount namespace: no other process
// can copy it and keep the filesystem mounted, mid-journal, after we let it
// go, and we copy no one else's. The checker runs only once the kernel has
// let go of the devices. Needs root, loop devices and the checker.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "crashlab/states/crash_image.h"
#include "crashlab/facts/fact_checker.h"
#include "crashlab/judge/fast_path.h"

namespace nvj::cli {

// A mounted filesystem as the oracle reads it: paths under `root`, files
// read with read(2).
class DirectoryFacts final : public crashlab::FactView {
 public:
  explicit DirectoryFacts(std::filesystem::path root) : root_(std::move(root)) {}
  crashlab::PathContent look(const std::string& path, std::optional<std::uint64_t> prefix) const override;
  crashlab::PathMeta meta(const std::string& path, bool xattrs) const override;
  std::optional<std::vector<std::uint32_t>> blocks(const std::string& path, std::size_t unit) const override;

 private:
  std::filesystem::path root_;
};

class KernelCheck {
 public:
  // Makes `scratch` (files, mount point) and one sparse file and loop
  // device per export, of these sizes. Throws naming what failed (not
  // root, no loop devices), having undone what it did.
  KernelCheck(std::filesystem::path scratch, const std::vector<std::uint64_t>& export_sizes, std::string filesystem,
              std::string mount_options);
  ~KernelCheck();
  KernelCheck(const KernelCheck&) = delete;
  KernelCheck& operator=(const KernelCheck&) = delete;

  // The state `image` holds now (before any replay into it: check this
  // before the fast path writes into the state). `data` is the
  // filesystem's export, `journal` its external journal's or log's.
  crashlab::StateVerdict check(crashlab::CrashImage& image, std::uint8_t data, std::optional<std::uint8_t> journal,
                               const crashlab::FactChecker& oracle);

  // The files the state was last written to, by export.
  const std::vector<std::filesystem::path>& files() const { return files_; }

 private:
  void write_state(crashlab::CrashImage& image);
  void teardown() noexcept;

  std::filesystem::path scratch_;
  std::string filesystem_;
  std::string mount_options_;
  std::vector<std::filesystem::path> files_;
  std::vector<std::string> loops_;
};

// Writes export `device` of the state `image` holds to `file`: a sparse file
// of the export's size, only what the state covers written, and of that no
// 64 KiB block of zeroes (left a hole).
void write_state_file(crashlab::CrashImage& image, std::uint8_t device, const std::filesystem::path& file);

}  // namespace nvj::cli
