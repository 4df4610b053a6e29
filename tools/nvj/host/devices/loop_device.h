// SPDX-License-Identifier: BSD-3-Clause
// Loop devices, through the kernel's ioctls (no losetup): a file becomes a
// block device the host's filesystems mount.
#pragma once

#include <cstdint>
#include <string>

namespace nvj::cli {

// Binds `file` to a free /dev/loopN and returns its path. Throws on failure.
// With `direct_io` the loop device reads and writes the file with O_DIRECT
// (losetup --direct-io=on): each request the filesystem sends reaches the
// file as it is, not through the file's page cache; where the file refuses
// O_DIRECT, this throws, naming the file. `sector_size` is its logical block
// size (losetup --sector-size: 512 to 4096).
std::string loop_attach(const std::string& file, bool direct_io = false, unsigned sector_size = 512);

// Unbinds a loop device. Throws if it is busy (mounted, open).
void loop_detach(const std::string& device);

// Deletes an unbound loop device (LOOP_CTL_REMOVE), so that the next one
// made with its number starts with the kernel's defaults: a device keeps
// the scheduler, write cache and discard limit written into its sysfs queue
// across bindings, and a discard limit of 0 cannot be written back. Returns
// false, changing nothing, if something holds it open for more than a second.
bool loop_remove(const std::string& device);

// The file a loop device is bound to, or "" if it is free.
std::string loop_backing_file(const std::string& device);

// Drops what the host caches of a block device (BLKFLSBUF, as blockdev
// --flushbufs), so that the next read reaches what is under it: a state
// written into a loop device's file, an export put back to its base. Flushes
// again until no page of it is cached (BLKFLSBUF skips pages something holds
// for a moment, silently); throws naming the device if pages stay.
void drop_block_cache(const std::string& device);

// How many pages of a block device's contents the host caches now (mincore).
std::uint64_t cached_pages(const std::string& device);

}  // namespace nvj::cli
