// Attaching a server's exports to block devices on this host: through the
// kernel's NBD client (nbd-client) where the kernel has the nbd module,
// otherwise through nbdfuse (the export as a file on a FUSE mount) and a loop
// device. Everything created is recorded in an UndoLog in the state folder.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "tools/nvj/client/server_address.h"

namespace nvj::cli {

enum class AttachMethod { automatic, nbd_client, fuse_loop };

struct AttachOptions {
  std::string server;                   // socket path or NBD URI
  std::filesystem::path state_dir;      // one attachment per folder
  std::vector<std::string> exports;     // empty: every export the server lists
  AttachMethod method = AttachMethod::automatic;
  TlsOptions tls;                       // the key for an nbds URI
  bool direct_io = true;                // nbdfuse's file read and written by the loop device with O_DIRECT
};

struct AttachedExport {
  std::string name;
  std::string device;  // /dev/loopN or /dev/nbdN
};

// The default state folder for an attachment called `name`.
std::filesystem::path default_state_dir(const std::string& name);

// Attaches; on any failure undoes what it did and throws.
std::vector<AttachedExport> attach(const AttachOptions& options);

// Undoes a previous attach (also a partial one). Refuses, changing nothing
// more, if a device is still mounted. Throws with what is left.
void detach(const std::filesystem::path& state_dir);

// What an attachment holds now, from its state folder.
std::vector<AttachedExport> attached(const std::filesystem::path& state_dir);

// Where `device` is mounted, or "" if it is not.
std::string mount_point_of(const std::string& device);

}  // namespace nvj::cli
