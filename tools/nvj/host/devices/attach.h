// SPDX-License-Identifier: BSD-3-Clause
// Attaching a server's exports to block devices on this host: through the
// kernel's NBD client (nbd-client) where the kernel has the nbd module,
// otherwise through nbdfuse (the export as a file on a FUSE mount) and a loop
// device. Everything created is recorded in an UndoLog in the state folder.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "tools/nvj/client/export_traits.h"
#include "tools/nvj/client/server_address.h"
#include "tools/nvj/host/devices/block_queue.h"

namespace nvj::cli {

enum class AttachMethod { automatic, nbd_client, fuse_loop };

struct AttachOptions {
  std::string server;                   // socket path or NBD URI
  std::filesystem::path state_dir;      // one attachment per folder
  std::vector<std::string> exports;     // empty: every export the server lists
  AttachMethod method = AttachMethod::automatic;
  TlsOptions tls;                       // the key for an nbds URI
  bool direct_io = true;                // nbdfuse's file read and written by the loop device with O_DIRECT
  // I/O schedulers: "NAME" for every export, or "EXPORT=NAME" for one; the
  // others get default_scheduler() of their rotation.
  std::vector<std::string> schedulers;
};

// Every block device gets what its export tells the host (export_traits.h):
// its logical sector size, and in its queue settings its rotation, its
// write cache, no discards where the export takes none, and the scheduler.
struct AttachedExport {
  std::string name;
  std::string device;  // /dev/loopN or /dev/nbdN
  ExportTraits traits;
  QueueSettings queue;
};

// Where the kernel's NBD client (nbd-client) reaches a server: its Unix
// socket (this host), or a TCP address (the guest of nvj vm --transport nbd,
// whose address is forwarded to the server's Unix socket by QEMU).
struct NbdClientServer {
  std::string socket;
  std::string host, port;  // with no socket
};

// The nbd-client command that connects `device` (/dev/nbdN) to export
// `name` with `sector_size`-byte sectors (-b): the kernel takes the
// export's other traits (rotation, write cache, trim) from the handshake
// by itself. nvj attach runs it on this host, nvj vm's guest /init in the
// guest.
std::vector<std::string> nbd_client_argv(const NbdClientServer& server, const std::string& name, unsigned sector_size,
                                         const std::string& device);

// The default state folder for an attachment called `name`.
std::filesystem::path default_state_dir(const std::string& name);

// --scheduler's values for the exports being attached: export -> scheduler.
// Throws std::invalid_argument for a scheduler Linux does not have or an
// export not among `exports`.
std::map<std::string, std::string> parse_schedulers(const std::vector<std::string>& given,
                                                    const std::vector<std::string>& exports);

// Attaches; on any failure undoes what it did and throws.
std::vector<AttachedExport> attach(const AttachOptions& options);

// Undoes a previous attach (also a partial one). Refuses, changing nothing
// more, if a device is still mounted. Throws with what is left.
void detach(const std::filesystem::path& state_dir);

// What an attachment holds now, from its state folder: names and devices
// only (traits and queue settings as default-constructed).
std::vector<AttachedExport> attached(const std::filesystem::path& state_dir);

// Where `device` is mounted, or "" if it is not.
std::string mount_point_of(const std::string& device);

}  // namespace nvj::cli
