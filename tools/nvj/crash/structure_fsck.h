// SPDX-License-Identifier: BSD-3-Clause
// The structure of every crash state the fast path reads, as e2fsck judges
// it. The fast path (crashlab/judge/fast_path.h) reads the facts and what a
// mount reads on the way; e2fsck reads the whole structure (link counts,
// block and inode bitmaps against what is in use, group summaries, extent
// trees, attribute blocks). So each state, as the fast path's recovery left
// it (its journal replayed or wiped), is written to sparse files, its
// orphan list released as a mount releases it (e2fsck -E journal_only -y,
// which does that and nothing more unless the superblock itself needs a
// repair: what it fixed beyond that is damage, repair_findings in
// host/fs_tools/filesystem_tools.h), then checked with e2fsck -fn, as the kernel's
// ground truth checks what its mount left (ground_truth.h). States that
// leave the same metadata (crashlab/states/metadata_key.h: most of a workload's
// states differ only in file data) are checked once, their verdict
// remembered by the key.
//
// Files and e2fsck only: no root, no loop device, no mount. The files are
// made at the first state checked, under the scratch folder, and removed
// with this.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "crashlab/index/recording_index.h"
#include "crashlab/states/crash_image.h"
#include "crashlab/states/hash.h"
#include "crashlab/states/metadata_key.h"

namespace nvj::cli {

class StructureCheck {
 public:
  // `scratch` gives the folder for the files when the first state needs
  // them. Throws std::runtime_error when e2fsck is not installed.
  StructureCheck(const crashlab::RecordingIndex& index, std::function<std::filesystem::path()> scratch);
  ~StructureCheck();
  StructureCheck(const StructureCheck&) = delete;
  StructureCheck& operator=(const StructureCheck&) = delete;

  // What e2fsck finds wrong with the state `image` holds, recovered (the
  // fast path's check done, its verdict `verdict`), "" for nothing:
  // "e2fsck -fn exits 4: Inode 12, i_blocks is 8, should be 0. ...". The
  // filesystem is export `data`, its external journal `journal`.
  std::string damage(const crashlab::StateVerdict& verdict, crashlab::CrashImage& image, std::uint8_t data,
                     std::optional<std::uint8_t> journal);

  // e2fsck's runs so far (one or two a state checked), the states checked
  // (each a key not seen before), and those whose key was.
  std::uint64_t runs() const { return runs_; }
  std::uint64_t checked() const { return checked_; }
  std::uint64_t remembered() const { return remembered_; }
  const crashlab::MetadataKeys& keys() const { return keys_; }

 private:
  std::string check(crashlab::CrashImage& image, std::uint8_t data, std::optional<std::uint8_t> journal);

  crashlab::MetadataKeys keys_;
  std::function<std::filesystem::path()> scratch_;
  std::filesystem::path folder_;
  std::unordered_map<std::vector<std::uint64_t>, std::string, crashlab::WordsHash> verdicts_;
  std::uint64_t key_words_ = 0;  // in verdicts_: past a bound they are forgotten
  std::uint64_t runs_ = 0, checked_ = 0, remembered_ = 0;
};

}  // namespace nvj::cli
