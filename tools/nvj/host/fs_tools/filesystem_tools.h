// SPDX-License-Identifier: BSD-3-Clause
// The three filesystems the lab mounts (ext4, xfs, btrfs) as this host's
// tools take them: the mount's data (its options with the external journal
// or log added) and the read-only check after it. Shared by the Testbed
// and the crash lab's ground truth, so that both mount and check alike.
#pragma once

#include <string>
#include <vector>

namespace nvj::cli {

// `options` with the external journal or log on `log` added: journal_path=
// for ext4, logdev= for xfs; btrfs has none (and `log` is ignored), nor has
// a filesystem whose `log` is "".
std::string mount_data(const std::string& filesystem, const std::string& options, const std::string& log);

// `options` for mounting a copy of a filesystem (a crash state) that may be
// mounted beside the original or another copy: XFS refuses a second mount
// of one UUID, so it gains nouuid, which changes nothing else of the mount.
std::string copy_mount_options(const std::string& filesystem, const std::string& options);

// Makes `filesystem` on block devices that hold none: mkfs.xfs -l
// logdev=LOG DATA (without `log`: its log inside DATA), mkfs.btrfs DATA,
// never forced (mkfs
// refuses a device that holds a filesystem); then flushes both devices'
// caches (blockdev --flushbufs), so that the server has every byte before
// anything looks at it. ext4 is the server's to build. Throws naming the
// command and its output.
// `options` go to mkfs before the device (e.g. {"--mixed"} for btrfs).
void make_filesystem(const std::string& filesystem, const std::string& data, const std::string& log,
                     const std::vector<std::string>& options = {});

// The filesystem's own checker, changing nothing: e2fsck -fn [-j LOG],
// xfs_repair -n [-l LOG], btrfs check --readonly. Exit status 0: clean.
std::vector<std::string> fsck_command(const std::string& filesystem, const std::string& data, const std::string& log);
// The checker as a state no mount takes gets it, repairing: e2fsck -fy
// [-j LOG] (it replays the journal first), xfs_repair [-l LOG] (which
// refuses a dirty log, and says so); btrfs check --readonly (its repair is
// not for a first response).
std::vector<std::string> repair_command(const std::string& filesystem, const std::string& data, const std::string& log);

// What a checker's output says is wrong, for a verdict: its lines without
// the banner, the pass and phase headers and the summary (e2fsck's "Pass
// 1: ...", xfs_repair's "Phase 1 - ...", "        - ..."), nor what says
// nothing of the filesystem itself (e2fsck's "Superblock hint for external
// superblock should be N": the superblock's s_journal_dev names the
// journal's device number where it was last mounted, and e2fsck looks the
// journal's UUID up among this machine's block devices, so a crash state
// checked elsewhere differs), at most the first `lines`, joined by "; ".
std::string checker_findings(const std::string& output, std::size_t lines);

// Whether a checker's run (its exit status and output) finds the filesystem
// damaged: a status but 0, unless it is 4 (errors left uncorrected) and
// checker_findings finds nothing (e2fsck's external journal hint alone).
bool checker_finds_damage(int status, const std::string& output);

// What a repairing e2fsck run (-y) fixed beyond what a mount does anyway,
// as checker_findings gives it ("" for nothing): less the orphan list's
// release ("Clearing orphaned inode ...", "Truncating ..."), the
// superblock's free block and inode counts (a mount counts them again) and
// "FILE SYSTEM WAS MODIFIED". A run that fixes the external journal hint
// goes on to a whole check, whose findings these then are.
std::string repair_findings(const std::string& output, std::size_t lines);

}  // namespace nvj::cli
