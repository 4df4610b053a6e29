// SPDX-License-Identifier: BSD-3-Clause
// nvj attach / nvj detach.
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "common/command_line.h"
#include "tools/nvj/commands.h"
#include "tools/nvj/host/devices/attach.h"

namespace nvj::cli {
namespace {

constexpr const char* kAttachText = R"(Attach the exports of a running nvjournal server to block devices on this host
and print one line per export: NAME DEVICE. Each device gets what its export
tells the host (its rotation, write cache, discard and sector size) and the
I/O scheduler a distribution gives such a disk (mq-deadline when it rotates,
none otherwise); stderr says what each got.
)";

constexpr const char* kDetachText = R"(Undo an attachment: release its block devices, unmount its FUSE mounts and
stop its nbdfuse processes. Also undoes a partial attach. Refuses while a
device is mounted.
)";

struct Target {
  std::string name = "default";
  std::string state;
  std::filesystem::path dir() const { return state.empty() ? default_state_dir(name) : std::filesystem::path(state); }
};

void add_target_options(Command& app, Target& t, const char* name_help) {
  app.add("--name", t.name, name_help).value_name("NAME");
  app.add("--state", t.state, "keep the attachment's state in DIR (default: /run/nvjournal/attach/NAME)")
      .value_name("DIR");
}

struct AttachArgs {
  Target target;
  AttachOptions options;
  std::string method = "auto";
  bool buffered = false;
};

int attach_main(AttachArgs& a) {
  AttachOptions& options = a.options;
  options.method = a.method == "nbd-client" ? AttachMethod::nbd_client
                   : a.method == "fuse"     ? AttachMethod::fuse_loop
                                            : AttachMethod::automatic;
  if (options.server.empty()) throw UsageError("nvj attach: which server? (nvj attach SOCKET-OR-URI)");
  options.state_dir = a.target.dir();
  std::vector<AttachedExport> devices;
  try {
    devices = attach(options);
  } catch (const std::invalid_argument& e) {  // the address, --scheduler: nothing was attached
    throw UsageError(std::string("nvj attach: ") + e.what());
  }
  for (const auto& e : devices) {
    std::printf("%s %s\n", e.name.c_str(), e.device.c_str());
    std::fprintf(stderr, "nvj attach: %s %s: %s, scheduler %s\n", e.name.c_str(), e.device.c_str(),
                 e.traits.describe().c_str(), e.queue.scheduler.c_str());
  }
  return 0;
}

}  // namespace

CommandRun declare_attach(Command& app) {
  auto a = std::make_shared<AttachArgs>();
  app.describe(kAttachText);
  app.add("SERVER", a->options.server,
                 "the server's Unix socket (nbdkit -U PATH) or an NBD URI: nbd://HOST[:PORT], or with TLS "
                 "nbds://HOST[:PORT] and --tls-psk");
  add_target_options(app, a->target, "name of this attachment (default: default); nvj detach --name NAME undoes it");
  app.add("--export", a->options.exports, "attach only this export (repeatable; default: all)")
      .value_name("NAME")
      .one_value_per_use();
  app.choice("--method", a->method, {"auto", "nbd-client", "fuse"},
             "auto (default), nbd-client (the kernel's NBD client), or fuse (nbdfuse and a loop device; auto picks "
             "this when the kernel has no nbd module; always with TLS)");
  app.add("--scheduler", a->options.schedulers,
          "the I/O scheduler of every device (NAME: none, mq-deadline, bfq or kyber), or of one export's "
          "(EXPORT=NAME; repeatable); default: mq-deadline for a rotating export, none otherwise")
      .value_name("[EXPORT=]NAME")
      .one_value_per_use();
  app.flag("--buffered", a->buffered,
           "fuse: the loop device goes through the nbdfuse file's page cache (default: direct I/O, each request of "
           "the filesystem reaches the server as it is)");
  add_tls_options(app, a->options.tls, "an nbds:// SERVER");
  return [a] {
    a->options.direct_io = !a->buffered;
    return attach_main(*a);
  };
}

CommandRun declare_detach(Command& app) {
  auto t = std::make_shared<Target>();
  app.describe(kDetachText);
  add_target_options(app, *t, "the attachment to undo (default: default)");
  return [t] {
    detach(t->dir());
    return 0;
  };
}

}  // namespace nvj::cli
