// SPDX-License-Identifier: BSD-3-Clause
#include "crashlab/judge/replay_memo.h"

#include <utility>

namespace crashlab {

namespace {

constexpr std::uint64_t kMaxBytes = std::uint64_t{256} << 20;

// A sink that passes writes on and keeps a copy of each.
class Taping final : public fscore::BlockSink {
 public:
  Taping(fscore::BlockSink& to, bool journal, std::vector<std::pair<bool, std::pair<std::uint64_t, std::vector<std::uint8_t>>>>& tape)
      : to_(to), journal_(journal), tape_(tape) {}
  void write(std::uint64_t offset, std::span<const std::uint8_t> bytes) override {
    to_.write(offset, bytes);
    tape_.push_back({journal_, {offset, std::vector<std::uint8_t>(bytes.begin(), bytes.end())}});
  }

 private:
  fscore::BlockSink& to_;
  bool journal_;
  std::vector<std::pair<bool, std::pair<std::uint64_t, std::vector<std::uint8_t>>>>& tape_;
};

}  // namespace

fscore::ext4::ReplayReport ReplayMemo::replay(fscore::ext4::ImageAccess fs, fscore::ext4::ImageAccess& journal,
                                              std::uint32_t now, const fscore::jbd2::RecoveryRules& rules) {
  // What a replay of an external journal reads: the filesystem's superblock
  // (read_image, and the copy it rewrites) and the journal device.
  std::vector<std::uint64_t> key{now, rules.partial_commit_blocks ? 1u : 0u};
  if (!fs.source.identity(1024, 1024, key) || !journal.source.identity(0, journal.source.size(), key)) {
    ++misses_;
    return fscore::ext4::replay_journal_like_e2fsck(fs, &journal, now, rules);
  }
  if (const auto it = entries_.find(key); it != entries_.end()) {
    ++hits_;
    for (const Write& w : it->second.writes) (w.journal ? journal.sink : fs.sink).write(w.offset, w.bytes);
    return it->second.report;
  }
  ++misses_;
  std::vector<std::pair<bool, std::pair<std::uint64_t, std::vector<std::uint8_t>>>> tape;
  Taping fs_tape(fs.sink, false, tape), journal_tape(journal.sink, true, tape);
  fscore::ext4::ImageAccess taped_journal{journal.source, journal_tape};
  const fscore::ext4::ReplayReport report =
      fscore::ext4::replay_journal_like_e2fsck(fscore::ext4::ImageAccess{fs.source, fs_tape}, &taped_journal, now, rules);
  Entry entry{report, {}};
  std::uint64_t bytes = 0;
  for (auto& [to_journal, write] : tape) {
    bytes += write.second.size();
    entry.writes.push_back(Write{to_journal, write.first, std::move(write.second)});
  }
  if (bytes_ + bytes > kMaxBytes) {
    entries_.clear();
    bytes_ = 0;
  }
  bytes_ += bytes;
  entries_.emplace(std::move(key), std::move(entry));
  return report;
}

}  // namespace crashlab
