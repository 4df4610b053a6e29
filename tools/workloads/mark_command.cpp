// SPDX-License-Identifier: BSD-3-Clause
// nvj mark (and nvj-workload mark, in a guest): a labelled point in a
// running server's time, posted to its control socket (POST /mark), or
// from inside nvj vm's guest over the serial line the host relays
// (common/mark_client.h). With a recording running the mark is in the
// recording too: a script marks a fact once the call that made it durable
// has returned, and the crash lab checks every crash state after the mark
// against it.
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "common/command_line.h"
#include "common/mark_client.h"
#include "crashlab/facts/fact.h"
#include "tools/workloads/workload_commands.h"

namespace nvj::workloads {

using cli::Command;
using cli::CommandRun;
using cli::UsageError;

namespace {

constexpr const char* kMarkText = R"(Mark a point in a running server's time with LABEL (the words joined by
spaces): GET /stats lists the marks, and a recording running on the server
records them. Post a mark after the call that made what it says durable has
returned (after fsync, not before). A label that starts with "fact" must be
a fact in the crash lab's format (nvj(1), FACTS). In nvj vm's guest,
NVJ_CONTROL names the serial line to the host, which posts the mark.
)";

// The control API's limit for a label.
constexpr std::size_t kMaxLabel = 1024;

struct MarkArgs {
  std::string control;
  std::vector<std::string> words;
};

int mark_main(const MarkArgs& a) {
  std::string control = a.control;
  if (control.empty()) {
    const char* env = std::getenv("NVJ_CONTROL");
    if (env != nullptr) control = env;
  }
  if (control.empty()) throw UsageError("nvj mark: which server? (--control SOCKET, or NVJ_CONTROL in the environment)");
  std::string label;
  for (const std::string& w : a.words) {
    if (!label.empty()) label += ' ';
    label += w;
  }
  if (label.empty()) throw UsageError("nvj mark: what label? (nvj mark --control SOCKET LABEL...)");
  if (label.size() > kMaxLabel)
    throw UsageError("nvj mark: a label has at most " + std::to_string(kMaxLabel) + " bytes, not " +
                     std::to_string(label.size()));
  try {
    crashlab::parse_fact(label);  // a label that starts "fact " must be one
  } catch (const crashlab::FactError& e) {
    throw UsageError(std::string("nvj mark: ") + e.what());
  }
  post_mark(control, label);
  return 0;
}

}  // namespace

CommandRun declare_mark(Command& app) {
  auto a = std::make_shared<MarkArgs>();
  app.describe(kMarkText);
  app.add("LABEL", a->words, "the mark's words");
  app.add("--control", a->control, "the server's control socket (default: $NVJ_CONTROL)").value_name("CONTROL");
  return [a] { return mark_main(*a); };
}

}  // namespace nvj::workloads
