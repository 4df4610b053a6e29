// SPDX-License-Identifier: BSD-3-Clause
#include "tools/nvj/vm/qemu.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "tools/nvj/host/files/text_file.h"
#include "tools/nvj/host/processes/process.h"

namespace nvj::cli {
namespace fs = std::filesystem;
namespace {

// QEMU's option syntax splits on commas; a literal comma is doubled.
std::string option_value(const std::string& text) {
  std::string out;
  for (const char c : text) {
    out += c;
    if (c == ',') out += ',';
  }
  return out;
}

constexpr const char* kTlsId = "nvj-tls";

// The drive's options: the NBD client's (file.*) under a raw format.
// cache=none: no page cache of the host between the guest and the server;
// the guest's flushes reach the server as NBD flushes. Discards reach it
// where the export takes them.
std::string drive_option(const NbdDrive& d, std::size_t index, bool tls) {
  std::string o = "file.driver=nbd";
  if (!d.socket.empty())
    o += ",file.server.type=unix,file.server.path=" + option_value(d.socket);
  else
    o += ",file.server.type=inet,file.server.host=" + option_value(d.host.empty() ? "localhost" : d.host) +
         ",file.server.port=" + option_value(d.port.empty() ? "10809" : d.port);
  o += ",file.export=" + option_value(d.export_name);
  if (tls) o += std::string(",file.tls-creds=") + kTlsId;
  return o + ",format=raw,if=none,id=nvjdisk" + std::to_string(index) + ",cache=none" +
         (d.traits.trim ? ",discard=unmap" : ",discard=ignore");
}

constexpr const char* kScsiBus = "nvjscsi";

// The disk the guest sees: a SCSI disk, target `index`, saying what the
// export says. rotation_rate 1 is SCSI's "non-rotating medium" (the guest's
// queue/rotational 0), 7200 a nominal disk's; write-cache sets the caching
// mode page's WCE bit (queue/write_cache), dpofua where the export takes FUA
// writes (queue/fua); a discard granularity of 0 clears
// LBPME (the guest's provisioning_mode "full": no discards).
std::string disk_device(const NbdDrive& d, std::size_t index) {
  const std::string i = std::to_string(index);
  std::string o = std::string("scsi-hd,bus=") + kScsiBus + ".0,channel=0,scsi-id=" + i + ",lun=0,drive=nvjdisk" + i +
                  ",rotation_rate=" + (d.traits.rotational ? "7200" : "1") +
                  ",write-cache=" + (d.traits.write_back ? "on" : "off") + ",dpofua=" + (d.traits.fua ? "on" : "off") +
                  ",logical_block_size=" + std::to_string(d.traits.logical_sector) +
                  ",physical_block_size=" + std::to_string(d.traits.physical_sector);
  if (!d.traits.trim) o += ",discard_granularity=0";
  return o;
}

}  // namespace

std::vector<std::string> qemu_argv(const QemuConfig& c) {
  std::vector<std::string> argv{c.program,
                                "-accel", "tcg",
                                "-nodefaults", "-no-user-config",
                                "-display", "none",
                                "-no-reboot",
                                "-m", std::to_string(c.memory_mib),
                                "-smp", std::to_string(c.cpus),
                                "-kernel", c.kernel.string(),
                                "-initrd", c.initrd.string(),
                                "-append", c.append,
                                "-serial", "file:" + c.console.string()};
  if (!c.serial_socket.empty())
    argv.insert(argv.end(), {"-chardev", "socket,id=nvjmarks,server=on,wait=off,path=" + option_value(c.serial_socket.string()),
                             "-serial", "chardev:nvjmarks"});
  if (c.tls)
    argv.insert(argv.end(), {"-object", std::string("tls-creds-psk,id=") + kTlsId + ",endpoint=client,dir=" +
                                            option_value(c.tls->dir.string()) +
                                            ",username=" + option_value(c.tls->username)});
  if (!c.drives.empty()) argv.insert(argv.end(), {"-device", std::string("virtio-scsi-pci,id=") + kScsiBus});
  for (std::size_t i = 0; i < c.drives.size(); ++i)
    argv.insert(argv.end(), {"-drive", drive_option(c.drives[i], i, c.tls.has_value()), "-device",
                             disk_device(c.drives[i], i)});
  // The guest's network: QEMU's user-mode stack with no way out of QEMU
  // (restrict=on) and no IPv6, each forward a chardev connected to the
  // server's socket (chardev:ID: the forward's bytes go there and back).
  if (!c.forwards.empty()) {
    std::string netdev = "user,id=nvjnet,restrict=on,ipv6=off";
    for (std::size_t i = 0; i < c.forwards.size(); ++i) {
      const GuestForward& f = c.forwards[i];
      const std::string id = "nvjfwd" + std::to_string(i);
      argv.insert(argv.end(), {"-chardev", "socket,id=" + id + ",path=" + option_value(f.socket)});
      netdev += ",guestfwd=tcp:" + f.address + ":" + std::to_string(f.port) + "-chardev:" + id;
    }
    argv.insert(argv.end(), {"-netdev", netdev, "-device", "virtio-net-pci,netdev=nvjnet,romfile="});
  }
  // Read-only, the host's own owners and modes passed through
  // (security_model=none), its mounts below it kept apart (multidevs=remap:
  // inode numbers from different filesystems never collide in the guest).
  if (!c.host_root.empty())
    argv.insert(argv.end(), {"-fsdev", "local,id=nvjroot,path=" + option_value(c.host_root.string()) +
                                           ",security_model=none,readonly=on,multidevs=remap",
                             "-device", "virtio-9p-pci,fsdev=nvjroot,mount_tag=nvjroot"});
  return argv;
}

QemuProcess::QemuProcess(const QemuConfig& config, const fs::path& log) : log_(log) {
  // Made before QEMU starts, so it can be opened and read from its first byte.
  console_fd_ = ::open(config.console.c_str(), O_RDONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (console_fd_ < 0) throw std::runtime_error("cannot create " + config.console.string() + ": " + std::strerror(errno));
  // Its own session: a Ctrl-C in the terminal reaches nvj, which stops it.
  pid_ = spawn(qemu_argv(config), SpawnOptions{log.string(), true, {}, {}});
}

QemuProcess::~QemuProcess() {
  stop();
  if (console_fd_ >= 0) ::close(console_fd_);
}

std::string QemuProcess::read_console() {
  std::string out;
  char buf[65536];
  for (;;) {
    const ssize_t n = ::read(console_fd_, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    out.append(buf, static_cast<std::size_t>(n));
  }
  return out;
}

bool QemuProcess::running() {
  if (pid_ <= 0) return false;
  int raw = 0;
  const pid_t r = ::waitpid(pid_, &raw, WNOHANG);
  if (r == 0) return true;
  if (r == pid_) status_ = WIFEXITED(raw) ? WEXITSTATUS(raw) : 128 + WTERMSIG(raw);
  pid_ = -1;
  return false;
}

void QemuProcess::kill_hard() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGKILL);
  status_ = wait_for(pid_);
  pid_ = -1;
}

void QemuProcess::stop() {
  if (pid_ <= 0) return;
  status_ = cli::stop(pid_, std::chrono::seconds(5));
  pid_ = -1;
}

std::string QemuProcess::log() const {
  std::string text = read_text_file(log_);
  while (!text.empty() && text.back() == '\n') text.pop_back();
  return text;
}

}  // namespace nvj::cli
