// SPDX-License-Identifier: BSD-3-Clause
// The journal's JSON, all of it: one transaction (a line of trace-file= and
// an entry of GET /journal's "recent"), one XFS log record, and the GET
// /journal document. Their shapes are published in
// docs/schemas/journal-trace-line.schema.json,
// docs/schemas/xfs-log-record.schema.json and docs/schemas/journal.schema.json.
#pragma once

#include <cstdint>

#include "common/clock.h"
#include "common/json.h"
#include "fscore/jbd2/journal_decoder.h"
#include "fscore/xfs/log_follower.h"
#include "server/probe/journal_tracer.h"

namespace nvj {

// Times are microseconds since `epoch`; `fill_after` is the log's fill once
// the transaction committed.
Json transaction_json(const fscore::jbd2::Transaction& t, std::uint32_t block_size, Nanos epoch, double fill_after);

// One XFS log record (GET /journal's "recent" with format xfs); times are
// microseconds since `epoch`.
Json xfs_record_json(const fscore::xfs::FollowedRecord& r, Nanos epoch);

// GET /journal: the tracer's report, or {"tracing":false} without a tracer.
Json journal_json(const JournalTracer* tracer);

}  // namespace nvj
