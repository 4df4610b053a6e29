// nvj attach / nvj detach.
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "common/args.h"
#include "tools/nvj/host/attach.h"
#include "tools/nvj/commands.h"

namespace nvj::cli {
namespace {

constexpr const char* kAttachHelp = R"(Usage: nvj attach [OPTION]... SERVER

Attach the exports of a running nvjournal server to block devices on this host
and print one line per export: NAME DEVICE.

SERVER is the server's Unix socket (nbdkit -U PATH) or an NBD URI:
nbd://HOST[:PORT], or with TLS nbds://HOST[:PORT] and --tls-psk.

  --name NAME      name of this attachment (default: default); nvj detach
                   --name NAME undoes it
  --state DIR      keep the attachment's state in DIR
                   (default: /run/nvjournal/attach/NAME)
  --export NAME    attach only this export (repeatable; default: all)
  --method M       auto (default), nbd-client (the kernel's NBD client), or
                   fuse (nbdfuse and a loop device; auto picks this when the
                   kernel has no nbd module; always with TLS)
  --tls-psk FILE   the key for an nbds:// SERVER: a PSK file of
                   USERNAME:HEXKEY lines (nbdkit --tls-psk, psktool)
  --tls-username NAME  the identity in FILE to use (default: its only one)
)";

constexpr const char* kDetachHelp = R"(Usage: nvj detach [--name NAME | --state DIR]

Undo an attachment: release its block devices, unmount its FUSE mounts and
stop its nbdfuse processes. Also undoes a partial attach. Refuses while a
device is mounted.
)";

struct Target {
  std::string name = "default";
  std::filesystem::path state;
  std::filesystem::path dir() const { return state.empty() ? default_state_dir(name) : state; }
};

}  // namespace

int attach_command(const std::vector<std::string>& argv) {
  Args args("attach", argv);
  Target target;
  AttachOptions options;
  std::string item;
  while (args.next(item)) {
    if (item == "--help" || item == "-h") {
      std::fputs(kAttachHelp, stdout);
      return 0;
    } else if (item == "--name") {
      target.name = args.value(item);
    } else if (item == "--state") {
      target.state = args.value(item);
    } else if (item == "--export") {
      options.exports.push_back(args.value(item));
    } else if (item == "--method") {
      const std::string m = args.value(item);
      if (m == "auto") options.method = AttachMethod::automatic;
      else if (m == "nbd-client") options.method = AttachMethod::nbd_client;
      else if (m == "fuse") options.method = AttachMethod::fuse_loop;
      else throw UsageError("nvj attach: --method=" + m + ": expected auto, nbd-client or fuse");
    } else if (item == "--tls-psk") {
      options.tls.psk_file = args.value(item);
    } else if (item == "--tls-username") {
      options.tls.username = args.value(item);
    } else if (item.rfind("-", 0) != 0 && options.server.empty()) {
      options.server = item;
    } else {
      args.unknown(item);
    }
  }
  if (options.server.empty()) throw UsageError("nvj attach: which server? (nvj attach SOCKET-OR-URI)");
  options.state_dir = target.dir();
  for (const auto& e : attach(options)) std::printf("%s %s\n", e.name.c_str(), e.device.c_str());
  return 0;
}

int detach_command(const std::vector<std::string>& argv) {
  Args args("detach", argv);
  Target target;
  std::string item;
  while (args.next(item)) {
    if (item == "--help" || item == "-h") {
      std::fputs(kDetachHelp, stdout);
      return 0;
    } else if (item == "--name") {
      target.name = args.value(item);
    } else if (item == "--state") {
      target.state = args.value(item);
    } else {
      args.unknown(item);
    }
  }
  detach(target.dir());
  return 0;
}

}  // namespace nvj::cli
