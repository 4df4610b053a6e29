// SPDX-License-Identifier: BSD-3-Clause
#include "crashlab/judge/fast_path.h"

#include <exception>
#include <optional>
#include <stdexcept>
#include <string>

#include "fscore/ext4/features.h"
#include "fscore/ext4/image_reader.h"
#include "fscore/ext4/journal_replay.h"
#include "fscore/ext4/orphans.h"
#include "fscore/ext4/tree_reader.h"

namespace crashlab {

const char* to_string(Verdict verdict) {
  switch (verdict) {
    case Verdict::pass: return "pass";
    case Verdict::fail: return "fail";
    case Verdict::unreadable: return "unreadable";
    case Verdict::needs_fsck: return "needs_fsck";
  }
  return "unknown";
}

std::optional<Verdict> verdict_named(std::string_view name) {
  for (const Verdict v : {Verdict::pass, Verdict::fail, Verdict::unreadable, Verdict::needs_fsck})
    if (name == to_string(v)) return v;
  return std::nullopt;
}

namespace {

namespace ext4 = fscore::ext4;

struct Feature {
  std::uint32_t bit;
  const char* name;
};
// What the fast path does not follow, by the superblock's three feature
// words.
constexpr Feature kCompatRefused[] = {{ext4::compat::kFastCommit, "fast_commit (fast commits are not replayed)"},
                                      {ext4::compat::kOrphanFile, "orphan_file (the orphan file is not read)"}};
constexpr Feature kIncompatRefused[] = {
    {ext4::incompat::kCompression, "compression"}, {ext4::incompat::kMetaBg, "meta_bg"},
    {ext4::incompat::kEaInode, "ea_inode"},        {ext4::incompat::kDirdata, "dirdata"},
    {ext4::incompat::kInlineData, "inline_data"},  {ext4::incompat::kEncrypt, "encrypt"},
    {ext4::incompat::kCasefold, "casefold"}};
constexpr Feature kRoCompatRefused[] = {{ext4::ro_compat::kBigalloc, "bigalloc"},
                                        {ext4::ro_compat::kReplica, "replica"},
                                        {ext4::ro_compat::kSharedBlocks, "shared_blocks"},
                                        {ext4::ro_compat::kOrphanPresent, "orphan_present"}};

}  // namespace

std::optional<std::string> fast_path_refuses(const fscore::BlockSource& source) {
  fscore::ext4::ImageInfo info;
  try {
    info = fscore::ext4::read_image(source);
  } catch (const std::exception& e) {
    return std::string("it does not read where the recording starts: ") + e.what();
  }
  if (info.journal_device) return std::string("a journal device, not a filesystem");
  std::string names;
  const auto scan = [&](std::uint32_t word, const auto& refused) {
    for (const Feature& f : refused)
      if ((word & f.bit) != 0) names += (names.empty() ? "" : ", ") + std::string(f.name);
  };
  scan(info.super.feature_compat, kCompatRefused);
  scan(info.super.feature_incompat, kIncompatRefused);
  scan(info.super.feature_ro_compat, kRoCompatRefused);
  if (names.empty()) return std::nullopt;
  return "it has " + names;
}

namespace {

// The stages of the mount the fast path stands for. Each either passes, or
// names why the state stops there: recovery as a refusal (no mount takes
// the state: needs_fsck), the orphans and the facts as damage (unreadable).
// An exception inside a stage is its reason.
template <class Stage>
std::optional<std::string> stopped_at(Stage&& stage) {
  try {
    return stage();
  } catch (const std::exception& e) {
    return std::string(e.what());
  }
}

StateVerdict judged(StateVerdict v, Verdict verdict, const std::string& stage, const std::string& why) {
  v.verdict = verdict;
  v.error = stage + ": " + why;
  return v;
}

// Whether the mount finds errors recorded: ERROR_FS in s_mount_state as the
// mount takes it, before the replay, or an error the journal recorded
// (s_errno: ext4_clear_journal_err). It then leaves the orphan list alone.
bool errors_recorded(const fscore::ext4::ImageInfo& info, fscore::BlockSource* journal_source) {
  std::int32_t journal_errno = 0;
  if (info.journal == fscore::ext4::JournalKind::kInternal) journal_errno = info.journal_super.errno_value;
  if (info.journal == fscore::ext4::JournalKind::kExternal && journal_source != nullptr)
    journal_errno = fscore::ext4::read_image(*journal_source).journal_super.errno_value;
  return (info.super.state & ext4::state::kErrorFs) != 0 || journal_errno != 0;
}

// The journal as the mount leaves it: replayed where the kernel replays
// it, wiped where it does not. Why no mount takes the state, or nullopt.
std::optional<std::string> recover(fscore::BlockSource& fs_source, fscore::BlockSink& fs_sink,
                                   fscore::BlockSource* journal_source, fscore::BlockSink* journal_sink,
                                   const fscore::ext4::ImageInfo& info, std::uint32_t now,
                                   const fscore::jbd2::RecoveryRules& rules, FastPathMemo* memo, StateVerdict& v) {
  // The kernel replays the journal only when the superblock says
  // needs_recovery; without it, it wipes the journal unread
  // (ext4_load_journal: jbd2_journal_wipe), where e2fsck would ask "Run
  // journal anyway?". The mount decides what the kernel shows: no replay.
  const bool kernel_replays = (info.super.feature_incompat & fscore::ext4::incompat::kRecover) != 0;
  v.journal_wiped = info.journal != fscore::ext4::JournalKind::kNone && !kernel_replays;
  const bool external = info.journal == fscore::ext4::JournalKind::kExternal;
  fscore::ext4::ImageAccess fs{fs_source, fs_sink};
  std::optional<fscore::ext4::ImageAccess> journal;
  if (external && journal_source != nullptr && journal_sink != nullptr)
    journal.emplace(fscore::ext4::ImageAccess{*journal_source, *journal_sink});
  // The wiped log is marked empty, as the mount leaves it (what e2fsck
  // then sees); without the journal's device no mount takes it anyway.
  if (v.journal_wiped && (!external || journal)) fscore::ext4::wipe_journal_like_the_kernel(fs, journal ? &*journal : nullptr);
  if (info.journal == fscore::ext4::JournalKind::kNone || !kernel_replays) return std::nullopt;
  if (external && !journal)
    throw std::runtime_error("the filesystem's journal is on another device, and there is no journal export");
  fscore::ext4::ReplayReport r =
      journal && memo != nullptr ? memo->replay.replay(fs, *journal, now, rules)
                                 : fscore::ext4::replay_journal_like_e2fsck(fs, journal ? &*journal : nullptr, now, rules);
  v.replayed = r.needed;
  v.replayed_blocks = r.result.replayed;
  std::optional<std::string> refused;
  // jbd2_journal_load fails the mount on either (-EFSCORRUPTED for a
  // failed commit, once the transactions before it are replayed).
  if (r.result.error != 0)
    refused = "recovery fails (error " + std::to_string(r.result.error) + "): the kernel does not mount it; e2fsck -fy replays and repairs";
  else if (r.scan.failed_commit)
    refused = "transaction " + std::to_string(*r.scan.failed_commit) +
              " is corrupt (its commit block fails its checksum): the kernel replays the transactions before it and "
              "does not mount it; e2fsck -fy replays the same, marks the filesystem with errors and checks it whole";
  v.replay = std::move(r);
  return refused;
}

}  // namespace

StateVerdict check_ext4_state(fscore::BlockSource& fs_source, fscore::BlockSink& fs_sink, fscore::BlockSource* journal_source,
                              fscore::BlockSink* journal_sink, const FactChecker& facts, std::uint32_t now,
                              const fscore::jbd2::RecoveryRules& rules, FastPathMemo* memo) {
  StateVerdict v;
  bool errors = false;  // the mount finds errors recorded: it leaves the orphan list alone
  if (const auto refused = stopped_at([&] {
        const fscore::ext4::ImageInfo info = fscore::ext4::read_image(fs_source);
        errors = errors_recorded(info, journal_source);
        return recover(fs_source, fs_sink, journal_source, journal_sink, info, now, rules, memo, v);
      }))
    return judged(std::move(v), Verdict::needs_fsck, "journal", *refused);
  // What the mount does next: the orphan list (fscore/ext4/orphans.h),
  // unless errors are recorded: ext4_orphan_cleanup then clears
  // s_last_orphan without reading the list, its inodes left as they are
  // (unreachable, or longer than their size: nothing a fact reads).
  if (const auto damage = stopped_at([&]() -> std::optional<std::string> {
        if (!errors) v.orphans = fscore::ext4::read_orphans(fs_source, fscore::ext4::read_image(fs_source)).deleted.size();
        else v.orphans_skipped = true;
        return std::nullopt;
      }))
    return judged(std::move(v), Verdict::unreadable, "orphans", *damage);
  if (const auto damage = stopped_at([&]() -> std::optional<std::string> {
        const fscore::ext4::TreeReader tree(fs_source);
        v.violations = facts.check(TreeFacts(tree, memo != nullptr ? &memo->content : nullptr));
        return std::nullopt;
      }))
    return judged(std::move(v), Verdict::unreadable, "filesystem", *damage);
  if (!v.violations.empty()) v.verdict = Verdict::fail;
  return v;
}

}  // namespace crashlab
