// SPDX-License-Identifier: BSD-3-Clause
// QEMU under software emulation (TCG: KVM cannot boot a guest on these
// machines) with the server's exports as SCSI disks on virtio-scsi through
// QEMU's own NBD client, each telling the guest what its export tells its
// clients (rotation, write cache, discard, sector sizes), or (the nbd
// transport) a guest network on which the guest's own kernel reaches the
// server, the kernel and initramfs given directly, and the serial
// console written to a file that the host reads as it grows.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "tools/nvj/client/export_traits.h"

namespace nvj::cli {

// One export as QEMU's own NBD client reaches it.
struct NbdDrive {
  std::string socket;       // a Unix socket, or
  std::string host, port;   // TCP ("" = localhost, NBD's 10809)
  std::string export_name;
  ExportTraits traits;      // what the guest's disk says it is
};

// A TCP address in the guest's network that QEMU forwards to a server's
// Unix socket (the guest's kernel NBD client connects there: the nbd
// transport). QEMU opens one connection to the socket when it starts, and
// carries one guest connection over it: one forward per export.
struct GuestForward {
  std::string address;  // in the guest's network, 10.0.2.0/24 ("10.0.2.100")
  unsigned port = 0;
  std::string socket;   // the server's Unix socket on this host
};

// The guest's network for forwards: its address, and where the forwards
// point (the host side of QEMU's user-mode network: 10.0.2.0/24, the guest
// 10.0.2.15, QEMU's own addresses 10.0.2.2 and .3).
inline constexpr const char* kGuestAddress = "10.0.2.15";
inline constexpr const char* kForwardAddress = "10.0.2.100";
inline constexpr unsigned kForwardFirstPort = 10809;  // NBD's, then one more per export

// TLS with a pre-shared key for every drive: QEMU reads DIR/keys.psk and
// presents the identity USERNAME from it.
struct QemuTlsPsk {
  std::filesystem::path dir;
  std::string username;
};

struct QemuConfig {
  std::string program;              // qemu-system-x86_64
  std::filesystem::path kernel;
  std::filesystem::path initrd;
  std::string append;               // the kernel command line
  unsigned memory_mib = 512;
  unsigned cpus = 1;
  std::vector<NbdDrive> drives;     // /dev/sda, /dev/sdb, ...
  std::optional<QemuTlsPsk> tls;    // the drives' TLS, if the server wants it
  std::filesystem::path console;    // the serial console's output
  // The second serial port (the guest's /dev/ttyS1), served by QEMU on this
  // Unix socket for the marks' relay (fact_relay.h); empty: none.
  std::filesystem::path serial_socket;
  // Shared with the guest read-only over virtio-9p (mount tag "nvjroot"):
  // this host's root, for the guest to run the host's programs; empty: none.
  std::filesystem::path host_root;
  // Non-empty: a virtio network card on QEMU's user-mode network,
  // restricted (restrict=on: nothing the guest sends leaves QEMU, nothing
  // reaches the guest but these forwards' answers), with these forwards.
  std::vector<GuestForward> forwards;
};

// The command line. No network (but the forwards' restricted one), no
// display, no default devices; a kernel panic or power-off ends QEMU
// (-no-reboot).
std::vector<std::string> qemu_argv(const QemuConfig& config);

// One QEMU process, stopped by its PID when the object goes.
class QemuProcess {
 public:
  // Starts QEMU, its own messages going to `log`; throws if it cannot.
  QemuProcess(const QemuConfig& config, const std::filesystem::path& log);
  ~QemuProcess();
  QemuProcess(const QemuProcess&) = delete;
  QemuProcess& operator=(const QemuProcess&) = delete;

  // The console bytes written since the last call.
  std::string read_console();
  // False once QEMU has exited (it is reaped then; see exit_status()).
  bool running();
  int exit_status() const { return status_; }
  // SIGKILL and reap: the machine loses power in the middle of whatever it does.
  void kill_hard();
  // SIGTERM, then SIGKILL: for teardown.
  void stop();
  pid_t pid() const { return pid_; }
  std::string log() const;

 private:
  std::filesystem::path log_;
  int console_fd_ = -1;
  pid_t pid_ = -1;
  int status_ = -1;
};

}  // namespace nvj::cli
