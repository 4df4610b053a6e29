// SPDX-License-Identifier: BSD-3-Clause
#include "tools/nvj/crash/lab_parameters.h"

#include "common/command_line.h"
#include "common/size.h"

namespace nvj::cli {

namespace {

std::string key_of(const std::string& parameter) { return parameter.substr(0, parameter.find('=')); }

// Whether the parameters given say the journal is no export of its own:
// ext4 with fs-journal=internal or none (the internal journal's blocks are
// a region of the data export, on journal-model=).
bool no_journal_export(const std::vector<std::string>& given) {
  for (const std::string& g : given)
    if (key_of(g) == "fs-journal" && g.substr(g.find('=') + 1).rfind("external", 0) != 0) return true;
  return false;
}

}  // namespace

std::vector<std::string> default_parameters(const std::string& filesystem) {
  if (filesystem == "xfs") return {"data=512M", "journal=64M", "data-model=hdd", "journal-model=nvram", "fs=none"};
  if (filesystem == "btrfs") return {"data=256M", "journal=32M", "data-model=hdd", "journal-model=nvram", "fs=none"};
  return {"data=256M", "journal=32M", "data-model=hdd", "journal-model=nvram"};
}

std::vector<std::string> parameters_over_defaults(const std::string& filesystem, const std::vector<std::string>& given,
                                                  const std::string& command, const std::string& hint,
                                                  const std::vector<std::string>& more) {
  std::vector<std::string> out;
  for (const std::string& g : given) {
    if (g.find('=') == std::string::npos || g.front() == '=')
      throw UsageError(command + ": '" + g + "' is no PARAM=VALUE" + hint);
    if (key_of(g) == "record" || key_of(g) == "control")
      throw UsageError(command + ": " + key_of(g) + "= is its own to set");
    // mkfs.xfs refuses a data device below 300 MiB (with a page of usage).
    if (filesystem == "xfs" && key_of(g) == "data") {
      std::uint64_t bytes = 0;
      try {
        bytes = parse_size(g.substr(g.find('=') + 1));
      } catch (const std::exception&) {
        continue;  // the plugin names a size it cannot read
      }
      if (bytes < (300ull << 20))
        throw UsageError(command + ": " + g + " with --fs xfs: XFS needs a data export of at least 300 MiB (data=320M, " +
                         "or leave data= to its default, 512M)");
    }
    if (filesystem != "ext4" && key_of(g) == "fs" && g != "fs=none")
      throw UsageError(command + ": " + g + " with --fs " + filesystem + ": the server builds ext4 only, and " +
                       filesystem + " is made on blank exports (fs=none)");
    if (filesystem != "ext4" && key_of(g).rfind("fs-", 0) == 0)
      throw UsageError(command + ": " + g + " with --fs " + filesystem + ": the fs- parameters shape the ext4 the " +
                       "server builds, and " + filesystem + " is made on blank exports (fs=none)");
  }
  const bool inside = filesystem == "ext4" && no_journal_export(given);
  std::vector<std::string> defaults;
  for (const std::string& d : default_parameters(filesystem)) {
    bool replaced = false;
    for (const std::string& m : more) replaced = replaced || key_of(m) == key_of(d);
    if (!replaced) defaults.push_back(d);
  }
  defaults.insert(defaults.end(), more.begin(), more.end());
  for (const std::string& d : defaults) {
    bool replaced = inside && key_of(d) == "journal";
    for (const std::string& g : given) replaced = replaced || key_of(g) == key_of(d);
    if (!replaced) out.push_back(d);
  }
  for (const std::string& g : given)
    if (g.back() != '=') out.push_back(g);  // KEY= only drops the default
  return out;
}

}  // namespace nvj::cli
