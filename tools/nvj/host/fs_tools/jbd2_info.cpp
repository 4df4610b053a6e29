// SPDX-License-Identifier: BSD-3-Clause
#include "tools/nvj/host/fs_tools/jbd2_info.h"

#include "tools/nvj/host/files/text_file.h"
#include "tools/nvj/host/files/text_pattern.h"

#include <filesystem>
#include <stdexcept>

namespace nvj::cli {
namespace {

std::uint64_t field(const std::string& text, const std::string& pattern) {
  const auto m = TextPattern(pattern).search(text);
  return m ? std::stoull(m->groups[1]) : 0;
}

}  // namespace

// The format is jbd2_seq_info_show() in the kernel's fs/jbd2/journal.c:
// "%lu transactions (%lu requested), each up to %u blocks", then averages.
Jbd2Info parse_jbd2_info(const std::string& text) {
  const auto m = TextPattern(R"((\d+) transactions \((\d+) requested\))").search(text);
  if (!m) throw std::runtime_error("not a jbd2 info file");
  Jbd2Info info;
  info.transactions = std::stoull(m->groups[1]);
  info.requested = std::stoull(m->groups[2]);
  info.commit_time_us = field(text, R"((\d+)us average transaction commit time)");
  info.handles_per_transaction = field(text, R"((\d+) handles per transaction)");
  info.blocks_per_transaction = field(text, R"((\d+) blocks per transaction)");
  info.logged_blocks_per_transaction = field(text, R"((\d+) logged blocks per transaction)");
  return info;
}

std::optional<Jbd2Info> read_jbd2_info(const std::string& journal_device) {
  const std::string name = std::filesystem::path(journal_device).filename().string();
  const std::filesystem::path root = "/proc/fs/jbd2";
  if (!std::filesystem::exists(root)) return std::nullopt;
  for (const auto& entry : std::filesystem::directory_iterator(root)) {
    // An internal journal is "<device>-<journal inode>", an external one
    // just "<journal device>".
    const std::string entry_name = entry.path().filename().string();
    if (entry_name != name && entry_name.rfind(name + "-", 0) != 0) continue;
    return parse_jbd2_info(read_text_file(entry.path() / "info"));
  }
  return std::nullopt;
}

}  // namespace nvj::cli
