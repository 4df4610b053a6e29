// SPDX-License-Identifier: BSD-3-Clause
// Mounts no other process can hold. A process that makes a mount namespace
// (unshare --mount, a container, a systemd service with PrivateTmp) copies
// every mount of the namespace it starts in, and while it lives, unmounting
// ours only takes away our copy: the filesystem stays mounted there, its
// device held, its journal not closed, and a checker run then sees it in
// use, mid-journal. A detached mount (fsopen, fsconfig, fsmount: attached
// to no namespace) cannot be copied; the caller reads it through its root
// directory's descriptor, and closing that unmounts it.
#pragma once

#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/unique_fd.h"

namespace nvj::cli {

// The kernel refused to make the filesystem: `what` says why, with the
// filesystem's own message where it gave one.
class MountRefused : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class DetachedMount {
 public:
  // `filesystem` on `device` with `options` ("a,b=c", as mount -o takes
  // them). Throws MountRefused when the kernel will not mount it, and
  // std::runtime_error when this kernel cannot make detached mounts at all.
  DetachedMount(const std::string& filesystem, const std::string& device, const std::string& options);

  // The filesystem's root as a path this process can open (/proc/self/fd/N).
  std::filesystem::path root() const;
  // Unmounts it now (its last reference gone; the destructor does otherwise).
  void close() { mount_.reset(); }

 private:
  UniqueFd mount_;
};

// Waits until nothing holds `devices` exclusively (a filesystem that is
// still mounted somewhere does), up to `timeout_ms`. Throws naming the first
// device still held.
void wait_until_released(const std::vector<std::string>& devices, int timeout_ms);

}  // namespace nvj::cli
