// SPDX-License-Identifier: BSD-3-Clause
// nvj vm's run: the server (started here, or one already running), the
// initramfs, one boot running the command, and for a crash test the power
// cut and a second boot that mounts again (replaying the journal) and runs
// the check. Everything started is stopped again by its PID, and the run
// folder removed, also after a failure or Ctrl-C.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tools/nvj/client/tls_psk.h"
#include "tools/nvj/vm/guest_kernel.h"

namespace nvj::cli {

struct VmOptions {
  std::vector<std::string> parameters;  // the plugin's, for the server started here
  std::string server;                   // a running server (socket or NBD URI) instead
  TlsOptions tls;                       // its key, for an nbds URI
  std::string control;                  // its control socket (a crash needs one)
  // The guest's kernel as --kernel names it (guest_kernel.h: a file, a
  // folder, debian:SUITE, ...) and its modules; "" = the distribution's.
  std::string kernel, modules;
  std::optional<GuestKernel> resolved_kernel;  // one resolved already: kernel and modules are not read
  // Once the kernel is known, before anything boots: the one it is.
  std::function<void(const GuestKernel&)> on_kernel;
  std::uint64_t memory = 512ull << 20;
  unsigned cpus = 1;
  std::chrono::seconds timeout{300};    // per boot
  std::string mount_options;
  // ext4, xfs (its log on the journal export, or inside the data export
  // with internal_log), btrfs. A server started here for xfs or btrfs
  // serves blank exports (fs=none), on which this host makes the
  // filesystem first (attached, mkfs, detached: root only); a server
  // given (--socket) must hold it already.
  std::string filesystem = "ext4";
  bool internal_log = false;
  bool host_root = false;               // the guest runs the host's programs (GuestPlan::host_root)
  // How the guest reaches the exports: "scsi", SCSI disks on virtio-scsi
  // through QEMU's own NBD client (/dev/sda, /dev/sdb), or "nbd", the
  // guest kernel's NBD client over the guest's network, which QEMU
  // forwards to the server's Unix socket and nowhere else (/dev/nbd0,
  // /dev/nbd1). nbd needs a server on a Unix socket, without TLS.
  std::string transport = "scsi";
  bool crash = false;
  std::string policy, seed;             // of the power cut ("" = the server's defaults)
  bool console = false;                 // the whole console, not only the command's output
  bool verbose = false;
  bool keep = false;                    // keep the run folder
  std::vector<std::string> command;
  std::vector<std::string> check;       // run by a second boot ("" = none, or `true` after a crash)
  // Once the server serves (and the filesystem is on it), before the first
  // boot: given the control socket (nvj crash explore keeps the base here).
  std::function<void(const std::string& control)> before_boot;
  // The guest's "nvj-lab" requests over its serial line (fact_relay.h);
  // none: they are dropped. Needs a control socket.
  std::function<void(std::string_view words)> lab;
};

// The transports (VmOptions::transport), for --transport's choices.
inline constexpr const char* kTransportScsi = "scsi";
inline constexpr const char* kTransportNbd = "nbd";

// Why `server` (a socket path or an NBD URI, as --socket takes it, "" for
// the server nvj vm starts) with `tls` cannot be reached by `transport`,
// or "" if it can: the nbd transport reaches a Unix socket without TLS
// only (the guest's network leads to that socket and nowhere else; the
// kernel's NBD client does no TLS).
std::string transport_refusal(const std::string& transport, const std::string& server, const TlsOptions& tls);

// Returns the exit status of the last command run (the check's when there is
// a second boot). Throws std::runtime_error when the guest never got there.
int run_vm(const VmOptions& options);

// The writes a power cut lost, from POST /crash's answer (JSON): the sum of
// every export's volatile_lost (-1 if the answer is not JSON or has none).
long long writes_lost(const std::string& crash_answer);

// The kernel's line saying it replayed the journal ("EXT4-fs (sda): recovery
// complete"), or "" if it did not.
std::string journal_replay_line(const std::vector<std::string>& filesystem_log);

}  // namespace nvj::cli
