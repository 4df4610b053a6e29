// Loop devices, through the kernel's ioctls (no losetup): a file becomes a
// block device the host's filesystems mount.
#pragma once

#include <string>

namespace nvj::cli {

// Binds `file` to a free /dev/loopN and returns its path. Throws on failure.
// With `direct_io` the loop device reads and writes the file with O_DIRECT
// (losetup --direct-io=on): each request the filesystem sends reaches the
// file as it is, not through the file's page cache; where the file refuses
// O_DIRECT, this throws, naming the file.
std::string loop_attach(const std::string& file, bool direct_io = false);

// Unbinds a loop device. Throws if it is busy (mounted, open).
void loop_detach(const std::string& device);

// The file a loop device is bound to, or "" if it is free.
std::string loop_backing_file(const std::string& device);

// Drops what the host caches of a block device (BLKFLSBUF, as blockdev
// --flushbufs), so that the next read reaches what is under it: a state
// written into a loop device's file, an export put back to its base.
// Throws naming the device.
void drop_block_cache(const std::string& device);

}  // namespace nvj::cli
