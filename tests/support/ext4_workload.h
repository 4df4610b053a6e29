// SPDX-License-Identifier: BSD-3-Clause
// An ext4 workload recorded without a kernel, for the crash lab's tests
// that cannot mount: fscore's own ImageBuilder makes the filesystem, and
// each step adds one file the way ext4 in data=ordered mode does it on the
// lab's default devices (the data disk with a volatile write cache, the
// journal on NVRAM):
//
//   mount     the superblock gets needs_recovery, the journal's superblock
//             a start (both written durable; the superblock volatile with
//             `nobarrier`, which never flushes)
//   step k    file k's data blocks written to the data disk (volatile);
//             the last step's metadata checkpointed home (volatile: jbd2
//             writes it back later, lazily); the changed metadata blocks
//             logged in one jbd2 transaction (the journal's writes durable
//             on acknowledgement), a flush of the data disk before the
//             commit block (ordered mode: the data before the commit); then
//             the mark "fact file NAME size S crc32c C"
//
// The metadata of step k is the difference between the image with files 1
// to k-1 and the image with files 1 to k, both built by ImageBuilder from
// scratch (it is deterministic; a file "pad" after the workload's files
// keeps the directory blocks, which it allocates last, in place); the
// superblock is never logged (what
// differs there, the free counts, is recomputed by a mount). With
// `fact_before_flush` there is no flush before the commit (the next step
// starts with it): the fact is posted while the data is volatile, a
// workload that lies, whose states that drop the data break the fact.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace nvj::test {

struct Ext4WorkloadOptions {
  bool internal_journal = false;  // the journal inside the data export (else an export of its own)
  unsigned files = 3;
  bool fact_before_flush = false;
  // No flush of the data disk ever (mount -o nobarrier): the mount's
  // superblock (needs_recovery), the data and the checkpoints all stay
  // volatile; states that drop the superblock have a journal the kernel
  // wipes unread.
  bool nobarrier = false;
};

struct Ext4Workload {
  std::vector<std::uint8_t> recording;
  // Per file (by step): its name, and the offsets on the data export of
  // the writes of its data blocks.
  std::vector<std::string> names;
  std::vector<std::vector<std::uint64_t>> data_writes;
};

Ext4Workload record_ext4_workload(const Ext4WorkloadOptions& options);

// The bytes of file `k` (0-based), as the workload writes them.
std::vector<std::uint8_t> ext4_workload_file(unsigned k);

}  // namespace nvj::test
