#include "crashlab/state_check.h"

#include <exception>
#include <optional>
#include <stdexcept>
#include <string>

#include "fscore/ext4/image_reader.h"
#include "fscore/ext4/journal_replay.h"
#include "fscore/ext4/tree_reader.h"

namespace crashlab {

const char* to_string(Verdict verdict) {
  switch (verdict) {
    case Verdict::pass: return "pass";
    case Verdict::fail: return "fail";
    case Verdict::unreadable: return "unreadable";
  }
  return "unknown";
}

StateVerdict check_ext4_state(fscore::BlockSource& fs_source, fscore::BlockSink& fs_sink, fscore::BlockSource* journal_source,
                              fscore::BlockSink* journal_sink, const FactOracle& oracle, std::uint32_t now,
                              ContentCache* cache) {
  StateVerdict v;
  const auto unreadable = [&](const std::string& what, const std::exception& e) {
    v.verdict = Verdict::unreadable;
    v.error = what + ": " + e.what();
    return v;
  };
  try {
    const fscore::ext4::ImageInfo info = fscore::ext4::read_image(fs_source);
    if (info.journal != fscore::ext4::JournalKind::kNone) {
      fscore::ext4::ImageAccess fs{fs_source, fs_sink};
      std::optional<fscore::ext4::ImageAccess> journal;
      if (info.journal == fscore::ext4::JournalKind::kExternal) {
        if (journal_source == nullptr || journal_sink == nullptr)
          throw std::runtime_error("the filesystem's journal is on another device, and there is no journal export");
        journal.emplace(fscore::ext4::ImageAccess{*journal_source, *journal_sink});
      }
      const fscore::ext4::ReplayReport r = fscore::ext4::replay_journal_like_e2fsck(fs, journal ? &*journal : nullptr, now);
      v.replayed = r.needed;
      v.replayed_blocks = r.result.replayed;
      if (r.result.error != 0)
        throw std::runtime_error("journal recovery failed (error " + std::to_string(r.result.error) + ")");
    }
  } catch (const std::exception& e) {
    return unreadable("journal", e);
  }
  try {
    const fscore::ext4::TreeReader tree(fs_source);
    v.violations = oracle.check(TreeFacts(tree, cache));
  } catch (const std::exception& e) {
    return unreadable("filesystem", e);
  }
  if (!v.violations.empty()) v.verdict = Verdict::fail;
  return v;
}

}  // namespace crashlab
