// Mounts that no other process can pin. A process that makes a mount
// namespace (unshare --mount, a container, a systemd service with
// PrivateTmp) copies every mount of the namespace it starts in; while it
// lives, unmounting ours only takes away our copy: the filesystem stays
// mounted in its namespace, its device held, its journal not closed. A
// checker run then sees a filesystem in use, mid-journal.
#pragma once

#include <string>
#include <vector>

namespace nvj::cli {

// Moves this process into a mount namespace of its own whose mounts do not
// propagate to the one it came from, so what it mounts from here on is seen
// (and copied) by no one else; its mounts go when the process does. It
// copies every mount there is, though, and holds those for as long as it
// lives: call it in a short-lived child. Once per process; a second call
// does nothing. Returns false, with why in `why`, where it cannot (a process
// with threads, no CAP_SYS_ADMIN).
bool enter_private_mount_namespace(std::string& why);

// Waits until nothing holds `devices` exclusively (a filesystem that is
// still mounted somewhere does), up to `timeout_ms`. Throws naming the first
// device still held.
void wait_until_released(const std::vector<std::string>& devices, int timeout_ms);

}  // namespace nvj::cli
