// SPDX-License-Identifier: BSD-3-Clause
#include "tools/nvj/crash/structure_fsck.h"

#include <chrono>
#include <stdexcept>

#include "fscore/ext4/image_reader.h"
#include "tools/nvj/crash/ground_truth.h"
#include "tools/nvj/host/fs_tools/filesystem_tools.h"
#include "tools/nvj/host/processes/process.h"

namespace nvj::cli {

namespace {

// Remembered keys, in words, before the memo starts again (some 256 MiB).
constexpr std::uint64_t kMostKeyWords = std::uint64_t{32} << 20;
// A run of e2fsck on a damaged image that takes longer is stopped (an error).
constexpr std::chrono::seconds kTimeout{300};

// "e2fsck -fn exits 4: FINDINGS" (the shown command, not the scratch files).
std::string status_text(const std::vector<std::string>& shown, int status, const std::string& findings) {
  return quote(shown) + " exits " + std::to_string(status) + ": " + findings;
}

}  // namespace

StructureCheck::StructureCheck(const crashlab::RecordingIndex& index, std::function<std::filesystem::path()> scratch)
    : keys_(index), scratch_(std::move(scratch)) {
  if (!scratch_) throw std::invalid_argument("the structure check has no scratch folder");
  if (which("e2fsck").empty()) throw std::runtime_error("the structure check needs e2fsck (e2fsprogs)");
}

StructureCheck::~StructureCheck() {
  std::error_code ignored;
  if (!folder_.empty()) std::filesystem::remove_all(folder_, ignored);
}

std::string StructureCheck::damage(const crashlab::StateVerdict& verdict, crashlab::CrashImage& image,
                                   std::uint8_t data, std::optional<std::uint8_t> journal) {
  std::vector<std::uint64_t> key = keys_.key(image, verdict);
  if (const auto found = verdicts_.find(key); found != verdicts_.end()) {
    ++remembered_;
    return found->second;
  }
  std::string found = check(image, data, journal);
  ++checked_;
  if (key_words_ + key.size() > kMostKeyWords) {
    verdicts_.clear();
    key_words_ = 0;
  }
  key_words_ += key.size();
  verdicts_.emplace(std::move(key), found);
  return found;
}

std::string StructureCheck::check(crashlab::CrashImage& image, std::uint8_t data, std::optional<std::uint8_t> journal) {
  if (folder_.empty()) {
    folder_ = scratch_() / "structure";
    std::filesystem::create_directories(folder_);
  }
  const std::filesystem::path data_file = folder_ / "data.img";
  const std::filesystem::path journal_file = folder_ / "journal.img";
  write_state_file(image, data, data_file);
  if (journal) write_state_file(image, *journal, journal_file);
  const std::string log = journal ? journal_file.string() : "";
  std::vector<std::string> shown_log;
  if (journal) shown_log = {"-j", "JOURNAL"};

  // The orphan list, released as the mount releases it. e2fsck -E
  // journal_only -y does only that (its journal is clean) and exits 0,
  // unless the superblock's own checks repaired something: it then checks
  // and repairs everything, and what it fixed beyond what a mount does is
  // the damage. (The external journal's hint alone makes it do so where
  // this machine has a device with the journal's UUID: the ground
  // truth's loop device of this very state's journal, or another lab's.)
  if (fscore::ext4::read_image(image.exported(data)).super.last_orphan != 0) {
    std::vector<std::string> release{"e2fsck", "-y", "-E", "journal_only"};
    if (journal) release.insert(release.end(), {"-j", log});
    release.push_back(data_file.string());
    const RunResult r = run(release, {}, kTimeout);
    ++runs_;
    const std::string fixed = repair_findings(r.output, 6);
    if ((r.status & ~1) != 0 || !fixed.empty()) {  // 1: something fixed
      std::vector<std::string> shown{"e2fsck", "-y", "-E", "journal_only"};
      shown.insert(shown.end(), shown_log.begin(), shown_log.end());
      return status_text(shown, r.status, fixed.empty() ? checker_findings(r.output, 6) : fixed) + " (releasing the orphan list)";
    }
  }
  const RunResult r = run(fsck_command("ext4", data_file.string(), log), {}, kTimeout);
  ++runs_;
  if (!checker_finds_damage(r.status, r.output)) return "";
  std::vector<std::string> shown{"e2fsck", "-fn"};
  shown.insert(shown.end(), shown_log.begin(), shown_log.end());
  return status_text(shown, r.status, checker_findings(r.output, 6));
}

}  // namespace nvj::cli
