// Loop devices, through the kernel's ioctls (no losetup): a file becomes a
// block device the host's filesystems mount.
#pragma once

#include <string>

namespace nvj::cli {

// Binds `file` to a free /dev/loopN and returns its path. Throws on failure.
std::string loop_attach(const std::string& file);

// Unbinds a loop device. Throws if it is busy (mounted, open).
void loop_detach(const std::string& device);

// The file a loop device is bound to, or "" if it is free.
std::string loop_backing_file(const std::string& device);

}  // namespace nvj::cli
