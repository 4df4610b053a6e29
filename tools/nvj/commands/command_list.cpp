// SPDX-License-Identifier: BSD-3-Clause
// The commands of nvj, in the order `nvj --help` lists them, and the
// options several of them share.
#include "tools/nvj/commands.h"

namespace nvj::cli {

void add_commands(CommandLine& nvj) {
  nvj.add("demo", "a short tour: server, attach, ext4, fs_mark, summary (./run demo runs morton2001)", declare_demo);
  nvj.add("mkfs", "build an ext4 image (internal or external journal), without mke2fs", declare_mkfs);
  nvj.add("journal", "a journal offline (inspect, replay like e2fsck) or live (top)", declare_journal);
  nvj.add("attach", "attach a running server's exports to block devices on this host", declare_attach);
  nvj.add("detach", "undo an attach", declare_detach);
  nvj.add("stats", "a running server's statistics, from its control socket", declare_stats);
  nvj.add("crash",
          "the crash lab: record a workload, check its crash states, explore (states, check, run, record, report, "
          "image, frames, explore, import, export, merge)",
          declare_crash);
  nvj.add("bench", "latency and IOPS of one export, through libnbd", declare_bench);
  nvj.add("experiment", "a classic experiment end to end: tables and plots", declare_experiment);
  nvj.add("vm", "run a command in a QEMU guest on the exports (--crash: power cut, replay)", declare_vm);
  nvj.add("kernel", "the guests' kernels: fetch Debian's by suite or package into a cache, list, remove", declare_kernel);
}

void add_tls_options(Command& app, TlsOptions& tls, const std::string& server) {
  app.add("--tls-psk", tls.psk_file,
                 "the key for " + server + ": a PSK file of USERNAME:HEXKEY lines (nbdkit --tls-psk, psktool)")
      .value_name("FILE");
  app.add("--tls-username", tls.username, "the identity in FILE to use (default: its only one)")
      .value_name("NAME");
}

}  // namespace nvj::cli
