// SPDX-License-Identifier: BSD-3-Clause
// What an exploration writes (explore.json, findings.md) and the merge of
// the shards of one (nvj crash merge, given explore.json files or their
// folders): the same explore.json one unsharded run writes, but for its
// time, which is the slowest shard's.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "common/json.h"

namespace nvj::cli {

// OUT/explore.json (docs/schemas/crash-explore.schema.json) and
// OUT/findings.md: the failing workloads grouped by signature (the rules
// broken, what and how, the core operations), each group with its first
// workload, the facts it broke and its reproducer.
void write_explore_report(const Json& report, const std::filesystem::path& out);

// OUT/kernels.json (docs/schemas/crash-explore-kernels.schema.json) and
// OUT/kernels.md: nvj crash explore --vm's kernels side by side, a column
// each, the workloads whose verdicts differ between kernels first, then
// those failing on every kernel. `table`: {bound, filesystem,
// mount_options, workloads: {N: name}, kernels: [{version, image,
// explored, states, findings, errors, seconds, failing: {N: count|null}}]}.
void write_kernel_table(const Json& table, const std::filesystem::path& out);

// Whether `input` (a file or a folder) is an exploration's.
bool is_explore_output(const std::string& input);

// Joins the shards' explore.json into OUT (their workloads' folders copied
// beside it), refusing shards of other explorations (bound, operations,
// mount options, filesystem), a shard given twice or missing, and a
// workload explored twice. Exit status as nvj crash explore's.
int explore_merge_main(const std::vector<std::string>& inputs, const std::string& out);

}  // namespace nvj::cli
